"""Ray node labels go in the group's `labels` field, as valid Kubernetes labels, not in `rayStartParams`.

The operator builds `--labels` from the group's `labels` map, so `rayStartParams.labels` is rejected, and
every key and value must be a valid Kubernetes label key and value.

Fails:

    workerGroupSpecs:
    - groupName: cpu
      rayStartParams: {labels: "zone=a"}

Passes:

    workerGroupSpecs:
    - groupName: cpu
      labels: {zone: a}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from ..k8s.names import label_value_errors, qualified_name_errors
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_groups

ABOUT = About("raycluster/group-labels", "error",
              "group labels are valid Kubernetes labels set in 'labels', not rayStartParams", versions=">=1.5")


def check(context: LintContext) -> Iterator[Problem]:
    for cluster, group in cluster_groups(context):
        if "labels" in group.ray_start_params:
            yield cluster.obj.problem(f"{group.name} group sets rayStartParams['labels'], which the operator "
                                      "rejects; move the labels to the group's 'labels' field",
                                      group.path + ("rayStartParams", "labels"))
        labels = group.spec.get("labels")
        if not isinstance(labels, dict):
            continue
        for key, value in labels.items():
            errors = qualified_name_errors(str(key))
            if errors:
                yield cluster.obj.problem(f"{group.name} group label key '{key}' is invalid ({'; '.join(errors)});"
                                          " rename the key", group.path + ("labels", key))
            errors = label_value_errors(str(value))
            if errors:
                yield cluster.obj.problem(f"{group.name} group label '{key}' has invalid value '{value}' "
                                          f"({'; '.join(errors)}); change the value", group.path + ("labels", key))
