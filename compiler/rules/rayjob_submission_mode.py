"""`submissionMode` is one the operator knows, and SidecarMode's restrictions are respected.

Modes: K8sJobMode (default), HTTPMode, InteractiveMode, SidecarMode. The CRD has no enum, so a typo passes the
API server and the job never runs. SidecarMode injects the submitter into the head pod, so it forbids
`clusterSelector`, `submitterPodTemplate` and `submitterConfig`, and needs head restartPolicy Never or unset.

Fails:

    kind: RayJob
    spec:
      submissionMode: SidecarMode
      submitterPodTemplate: {spec: {containers: [{name: submit}]}}

Passes:

    kind: RayJob
    spec:
      submissionMode: SidecarMode
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import job_views

ABOUT = About("rayjob/submission-mode", "error",
              "submissionMode is known, and SidecarMode has no selector, submitter template or config")

MODES = ("K8sJobMode", "HTTPMode", "InteractiveMode", "SidecarMode")


def check(context: LintContext) -> Iterator[Problem]:
    for job in job_views(context):
        mode = job.submission_mode
        if mode not in MODES:
            yield job.obj.problem(f"submissionMode '{mode}' is not one the operator knows; use one of "
                                  f"{', '.join(MODES)}", job.at("submissionMode"))
            continue
        if mode != "SidecarMode":
            continue
        if job.cluster_selector:
            yield job.obj.problem("SidecarMode cannot use clusterSelector; use rayClusterSpec or another mode",
                                  job.at("clusterSelector"))
        for field in ("submitterPodTemplate", "submitterConfig"):
            if job.spec.get(field) is not None:
                yield job.obj.problem(f"SidecarMode does not support {field}; remove it or use K8sJobMode",
                                      job.at(field))
        cluster = job.cluster
        if cluster is not None:
            policy = cluster.head.template_spec.get("restartPolicy")
            if policy not in (None, "", "Never"):
                yield job.obj.problem(f"SidecarMode needs the head restartPolicy Never or unset, not {policy}; set "
                                      "restartPolicy: Never", cluster.head.path + ("template", "spec", "restartPolicy"))
