"""RayService `serviceUnhealthySecondThreshold` and `deploymentUnhealthySecondThreshold` are read by nothing.

Both fields are still in the CRD, so the API server accepts them, but no version of the operator krc supports
reads them: a RayService is not restarted after that many unhealthy seconds, whatever is written.

KubeRay source: `ray-operator/apis/ray/v1/rayservice_types.go`, `RayServiceSpec` ("Deprecated: This field is not
used anymore. ref: https://github.com/ray-project/kuberay/issues/1685"); no code under
`ray-operator/controllers/` reads either field in 1.5.2, 1.6.2 or 1.7.0.

Fails:

    kind: RayService
    spec:
      serviceUnhealthySecondThreshold: 900

Passes:

    kind: RayService
    spec:
      serveConfigV2: ...
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import objects_of

ABOUT = About("rayservice/deprecated-thresholds", "warning",
              "serviceUnhealthySecondThreshold and deploymentUnhealthySecondThreshold do nothing")

FIELDS = ("deploymentUnhealthySecondThreshold", "serviceUnhealthySecondThreshold")


def check(context: LintContext) -> Iterator[Problem]:
    for obj, spec in objects_of(context, "RayService"):
        for field in FIELDS:
            if spec.get(field) is not None:
                yield obj.problem(f"{field}: {spec[field]} is deprecated and read by no operator version: nothing "
                                  f"happens after {spec[field]} unhealthy seconds; remove {field}",
                                  ("spec", field))
