"""KubeRay object names must fit what the operator derives from them.

The operator appends suffixes to names (a RayJob's cluster gets `-xxxxx`, a RayCronJob's jobs get
`-<unix minute>`, Services get `-head-svc`), so each kind has its own length limit: RayCluster 53, RayJob and
RayService 47, RayCronJob 36 (from operator 1.7; 1.6 has no RayCronJob name limit). Names must also be
DNS-1035 labels (start with a letter); a RayCronJob name is not checked by the operator itself, but every
RayJob it creates is, so the same applies.

Fails:

    apiVersion: ray.io/v1
    kind: RayCluster
    metadata:
      name: 1-cluster

Passes:

    apiVersion: ray.io/v1
    kind: RayCluster
    metadata:
      name: cluster-1
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from ..k8s.names import dns1035_label_errors
from .rule import About
from .support.context import LintContext
from .support.versions import applies_to

ABOUT = About("kuberay/name", "error", "object names are DNS-1035 labels within the per-kind length limit")

MAX_LENGTH = {"RayCluster": 53, "RayJob": 47, "RayService": 47, "RayCronJob": 36}
# operator versions that enforce a kind's limit; the RayCronJob limit is new in 1.7 (reference section 1.5)
LIMIT_VERSIONS = {"RayCronJob": ">=1.7"}


def check(context: LintContext) -> Iterator[Problem]:
    for obj in context.kuberay_objects():
        name = obj.metadata.get("name")
        if not isinstance(name, str) or not name:
            continue  # generateName: the API server picks the suffix
        path = ("metadata", "name")
        limit = MAX_LENGTH[obj.kind]
        if len(name) > limit and applies_to(LIMIT_VERSIONS.get(obj.kind, ""), context.operator_version):
            yield obj.problem(f"{obj.kind} name '{name}' has {len(name)} characters, more than the {limit} the "
                              f"operator allows (it appends suffixes to it); shorten the name", path)
        errors = dns1035_label_errors(name)
        if errors:
            yield obj.problem(f"{obj.kind} name '{name}' is not a DNS-1035 label ({'; '.join(errors)}); rename it, "
                              "for example to lower case letters, digits and '-' starting with a letter", path)
