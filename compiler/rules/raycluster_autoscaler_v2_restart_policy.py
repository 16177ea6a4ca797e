"""Under autoscaler v2 the operator sets every Ray Pod's `restartPolicy` to Never, whatever the template says.

With `enableInTreeAutoscaling: true` and `autoscalerOptions.version: v2`, the head Pod and every worker Pod get
`restartPolicy: Never` (the autoscaler replaces failed workers; a container restarting in place would confuse
it). A template's `Always` or `OnFailure` is overwritten silently.

KubeRay source: `ray-operator/controllers/ray/common/pod.go`: `DefaultHeadPodTemplate` (under
`IsAutoscalingV2Enabled`) and `DefaultWorkerPodTemplate` (`IsAutoscalingEnabled && IsAutoscalingV2Enabled`) set
`podTemplate.Spec.RestartPolicy = corev1.RestartPolicyNever` (1.5.2, 1.6.2, 1.7.0). v2 is decided by
`autoscalerOptions.version` alone here (`utils/util.go` `IsAutoscalingV2Enabled`).

Fails:

    enableInTreeAutoscaling: true
    autoscalerOptions: {version: v2}
    workerGroupSpecs:
    - groupName: cpu
      template: {spec: {restartPolicy: Always, containers: [{name: ray-worker}]}}

Passes:

    enableInTreeAutoscaling: true
    autoscalerOptions: {version: v2}
    workerGroupSpecs:
    - groupName: cpu
      template: {spec: {containers: [{name: ray-worker}]}}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..problems import Problem
from .support.context import LintContext
from .support.ray_objects import cluster_views

ID = "raycluster/autoscaler-v2-restart-policy"
SEVERITY = "warning"
SUMMARY = "autoscaler v2 overrides the Pods' restartPolicy with Never"
VERSIONS = ""
ENVIRONMENT_ONLY = False


def check(context: LintContext) -> Iterator[Problem]:
    for cluster in cluster_views(context):
        if not (cluster.autoscaling and cluster.autoscaler_options.get("version") == "v2"):
            continue
        for group in cluster.groups:
            policy = group.template_spec.get("restartPolicy")
            if policy not in (None, "Never"):
                yield cluster.obj.problem(
                    f"{group.name} group has restartPolicy {policy}, which autoscaler v2 replaces with Never; "
                    "remove restartPolicy from the Pod template", group.path + ("template", "spec", "restartPolicy"))
