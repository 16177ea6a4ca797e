"""What an unset key of an environment means: `krc explain` of a valid key no layer sets and krc gives no
default says so, and what runs instead (krc's fallback, or Kubernetes' and the operator's own behaviour).

Keyed by the key's name; the environment's own values fill in what applies (the image a group falls back to).
A key without an entry gets the general answer: krc writes nothing for it.
"""
from __future__ import annotations

from typing import Any

from ..environment.model import Environment

_GENERAL = ("krc writes nothing for it, so what Kubernetes, the CRD or the operator does without it applies "
            "(the description above says what the key is for)")

_MEANINGS = {
    "nodeSelector": "no node selector: the Pods may run on any node that has room and whose taints they tolerate",
    "tolerations": "no tolerations of its own (a group with gpu: still gets the nvidia.com/gpu toleration): its "
                   "Pods stay off tainted nodes",
    "raw": "nothing is merged over what krc generates",
    "production": "not declared production: the production-only rules and policies (GPU-pool groups without "
                  "GPUs, memory under 1Mi, job clean-up and deadlines) do not hold it",
    "cpuOnly": "not declared CPU-only: GPU requests are allowed",
    "rayStartParams": "only the parameters krc derives and the operator adds (block, metrics-export-port, "
                      "dashboard-agent-listen-port; address on workers, dashboard-host on the head)",
    "resources": "Ray counts the group's CPUs, GPUs and memory from the Ray container's limits",
    "env": "no variables of its own: the Ray container gets only those the operator sets",
    "labels": "no labels of its own: the objects or Pods carry the environment's labels and the operator's",
    "annotations": "no annotations of its own",
    "cpu": "no CPU request or limit: Kubernetes may place the Pod on a full node, and Ray counts every CPU of the "
           "node it lands on",
    "memory": "no memory request or limit: Kubernetes may place the Pod on a full node, and Ray sizes itself on "
              "the node's memory",
    "serviceAccountName": "the Pods run as the namespace's default ServiceAccount (an autoscaled head: one the "
                          "operator creates, named after the cluster)",
    "idleTimeoutSeconds": "the autoscaler's own idle timeout applies (60 seconds in Ray 2.58)",
    "watchNamespaces": "the operator watches every namespace of its cluster, with a ClusterRole",
    "featureGates": "every gate keeps the pinned chart's default",
    "destination": "Argo CD deploys into its own cluster (https://kubernetes.default.svc)",
    "namespace": "the object goes into the environment's namespace",
    "clusterSelector": "the job creates its own cluster from its cluster: block",
    "activeDeadlineSeconds": "no deadline: a job that hangs runs (and holds its cluster) forever",
    "preRunningDeadlineSeconds": "no deadline: a job whose cluster never starts waits forever",
    "backoffLimit": "KubeRay's default 0: a failed job is not retried",
    "shutdownAfterJobFinishes": "KubeRay's default false: the job's cluster keeps running (and costing) after "
                                "the job ends",
    "ttlSecondsAfterFinished": "KubeRay's default 0: with shutdownAfterJobFinishes the cluster is deleted as soon "
                               "as the job ends",
    "runtimeEnv": "no runtime_env: the job runs with what the image holds",
    "argocd": "no Argo CD Applications: the render is deployed some other way",
    "operator": "the operator chart comes from the layers it extends",
}


def meaning(env: Environment, path: tuple[Any, ...]) -> str:
    """What running without the key at `path` means, in this environment."""
    key = str(path[-1]) if path else ""
    if key == "image":
        image, gpu_image = env.get(("ray", "image")), env.get(("ray", "gpuImage"))
        if len(path) >= 2 and path[0] in ("clusters", "services", "jobs", "cronJobs"):
            gpu = env.get(tuple(path[:-1]) + ("gpu",))
            if gpu and gpu_image:
                return f"the group has gpu: {gpu}, so it runs ray.gpuImage ({gpu_image})"
            if image:
                return f"the group runs ray.image ({image})" + (
                    f"; a group with gpu: runs ray.gpuImage ({gpu_image})" if gpu_image else "")
        return "the Ray containers run ray.image, and groups with gpu: ray.gpuImage"
    return _MEANINGS.get(key, _GENERAL)
