"""In HTTPMode and InteractiveMode no submitter Pod exists: `submitterPodTemplate` and `submitterConfig` are unused.

The operator creates a submitter (a Kubernetes Job) only in K8sJobMode; HTTPMode submits through the dashboard's
HTTP API and InteractiveMode waits for the user to submit. A submitter template or config written for either is
accepted and never read: its image, resources, service account or backoff limit do nothing.

KubeRay source: `ray-operator/controllers/ray/rayjob_controller.go`: `Reconcile` calls `createK8sJobIfNeed`
(which reads `getSubmitterTemplate` -> `common.GetSubmitterTemplate`, and `createNewK8sJob` reads
`submitterConfig.backoffLimit`) only `if rayJobInstance.Spec.SubmissionMode == rayv1.K8sJobMode` (1.5.2, 1.6.2,
1.7.0). SidecarMode rejects both fields (`rayjob/submission-mode`).

Fails:

    kind: RayJob
    spec:
      submissionMode: HTTPMode
      submitterConfig: {backoffLimit: 5}

Passes:

    kind: RayJob
    spec:
      submissionMode: K8sJobMode
      submitterConfig: {backoffLimit: 5}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import job_views

ABOUT = About("rayjob/submitter-unused", "warning",
              "submitterPodTemplate and submitterConfig do nothing in HTTPMode and InteractiveMode")

FIELDS = ("submitterConfig", "submitterPodTemplate")


def check(context: LintContext) -> Iterator[Problem]:
    for job in job_views(context):
        mode = job.submission_mode
        if mode not in ("HTTPMode", "InteractiveMode"):
            continue
        for field in FIELDS:
            if job.spec.get(field) is not None:
                yield job.obj.problem(
                    f"{field} is set but submissionMode is {mode}, in which the operator creates no submitter "
                    f"Pod, so it is never read; remove {field}, or use submissionMode: K8sJobMode",
                    job.at(field))
