"""Synthetic krc projects of N realistic, prod-like environments, built from this repository's templates.

Each environment extends a shared `base.yaml` (a copy of the repository's) and is written as data (YAML dumped,
never pasted together): an EKS production environment with a GPU training cluster of three worker groups, a
RayService, a RayJob and a RayCronJob, its own namespace, IRSA role, Argo CD destination and sizes, and every
third one pinned to the older chart. The same content is also what Kapitan's inventory gets (bench/kapitan.py).
Usage: python bench/synthetic.py DEST N   (DEST/environments, templates, policies, vendor/ are created)
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
PARTS = ("templates", "policies")
CHARTS = ("1.6.2", "1.7.0")
REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-2")
SCHEMA_LINE = "# yaml-language-server: $schema=../compiler/schemas/environment.schema.json\n"


def environment_name(i: int) -> str:
    return f"prod-{REGIONS[i % len(REGIONS)]}-{i:04d}"


def _gpu_group(name: str, replicas: int, gpu: int, cpu: int, memory: str, instance: str) -> dict[str, Any]:
    return {"name": name, "minReplicas": 0, "maxReplicas": replicas, "cpu": cpu, "memory": memory, "gpu": gpu,
            "nodeSelector": {"karpenter.sh/nodepool": "gpu", "karpenter.k8s.aws/instance-gpu-name": "a10g",
                             "node.kubernetes.io/instance-type": instance}}


def environment(i: int) -> dict[str, Any]:
    """Environment i: the shape of environments/prod-eks-gpu.yaml, with its own names and sizes."""
    namespace = f"ray-{i:04d}"
    region = REGIONS[i % len(REGIONS)]
    account = f"{100000000000 + i:012d}"
    bucket = f"s3://ml-artifacts-{region}-{i:04d}"
    ecr = f"111122223333.dkr.ecr.{region}.amazonaws.com/ray"  # the registry policies/image-registry.cue allows
    gpu_workers = 2 + i % 5
    head = {"rayStartParams": {"num-cpus": "0"}, "cpu": 4, "memory": "16Gi",
            "nodeSelector": {"karpenter.sh/nodepool": "cpu-on-demand"}}
    small = {"name": "gpu-a10g", "minReplicas": 1, "maxReplicas": 2 + i % 3, "cpu": 7, "memory": "28Gi", "gpu": 1,
             "nodeSelector": {"karpenter.sh/nodepool": "gpu", "node.kubernetes.io/instance-type": "g5.2xlarge"}}
    job_cluster = {"serviceAccountName": "ray-s3", "head": {"rayStartParams": {"num-cpus": "0"}, "cpu": 2,
                                                             "memory": "8Gi"},
                   "workerGroups": [{**small, "replicas": 1, "minReplicas": 1, "maxReplicas": 1}]}
    return {
        "extends": "base",
        "description": f"Production {region} #{i} on EKS with GPU worker groups",
        "production": True,
        "namespace": namespace,
        "labels": {"app.kubernetes.io/managed-by": "krc", "team": f"ml-team-{i % 17}", "region": region},
        "operator": {"chart": {"version": CHARTS[0] if i % 3 == 0 else CHARTS[1]},
                     "watchNamespaces": [namespace],
                     "featureGates": {"RayCronJob": True},
                     "values": {"replicas": 1, "resources": {"limits": {"cpu": "500m", "memory": "1Gi"},
                                                             "requests": {"cpu": "250m", "memory": "512Mi"}}}},
        "ray": {"image": f"{ecr}:2.58.0-py312", "gpuImage": f"{ecr}:2.58.0-py312-gpu"},
        "argocd": {"project": f"ml-{region}", "destination": {"name": f"eks-{region}-{i:04d}"}},
        "namespaces": [{"name": namespace}],
        "serviceAccounts": [{"name": "ray-s3", "annotations": {
            "eks.amazonaws.com/role-arn": f"arn:aws:iam::{account}:role/ray-{i:04d}-s3-access"}}],
        "clusters": [{
            "name": "ray-gpu-train", "serviceAccountName": "ray-s3",
            "autoscaling": {"enabled": True, "version": "v2", "idleTimeoutSeconds": 300 + 60 * (i % 4)},
            "head": head,
            "workerGroups": [
                {"name": "cpu", "minReplicas": 0, "maxReplicas": 10 + i % 7, "cpu": 8, "memory": "32Gi",
                 "nodeSelector": {"karpenter.sh/nodepool": "cpu-spot"}},
                _gpu_group("gpu-a10g", gpu_workers, 1, 7, "28Gi", "g5.2xlarge"),
                _gpu_group("gpu-a10g-x4", 1 + i % 2, 4, 44, "180Gi", "g5.12xlarge"),
            ]}],
        "services": [{
            "name": "summarizer",
            "serveConfig": {"applications": [{
                "name": "summarizer", "import_path": "summarizer.app:deployment", "route_prefix": "/summarize",
                "runtime_env": {"working_dir": f"{bucket}/serve/summarizer-{i:04d}.zip"},
                "deployments": [{"name": "Summarizer", "ray_actor_options": {"num_gpus": 1},
                                 "autoscaling_config": {"min_replicas": 1, "max_replicas": 4,
                                                        "target_ongoing_requests": 8}}]}]},
            "cluster": {"serviceAccountName": "ray-s3",
                        "autoscaling": {"enabled": True, "version": "v2", "idleTimeoutSeconds": 300},
                        "head": {"rayStartParams": {"num-cpus": "0"}, "cpu": 4, "memory": "16Gi"},
                        "workerGroups": [small]}}],
        "jobs": [{
            "name": "train-resnet",
            "entrypoint": f"python train.py --epochs {10 + i % 30} --checkpoint-dir {bucket}/checkpoints/resnet",
            "runtimeEnv": {"working_dir": f"{bucket}/jobs/train-resnet.zip",
                           "pip": ["torch==2.9.1", "torchvision==0.24.1"]},
            "shutdownAfterJobFinishes": True, "ttlSecondsAfterFinished": 600, "backoffLimit": 2,
            "activeDeadlineSeconds": 14400, "preRunningDeadlineSeconds": 1800,
            "cluster": job_cluster}],
        "cronJobs": [{
            "name": "nightly-eval", "schedule": f"{i % 60} {i % 24} * * *",
            "job": {"entrypoint": f"python evaluate.py --model {bucket}/models/latest",
                    "shutdownAfterJobFinishes": True, "ttlSecondsAfterFinished": 300, "backoffLimit": 1,
                    "activeDeadlineSeconds": 3600, "preRunningDeadlineSeconds": 900,
                    "cluster": job_cluster}}],
    }


class _WrittenOut(yaml.SafeDumper):
    """Every value written where it is used, as people write environment files (no &anchors and *aliases for
    the parts the generator shares between worker groups)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def environment_text(data: dict[str, Any]) -> str:
    return SCHEMA_LINE + yaml.dump(data, Dumper=_WrittenOut, sort_keys=False, default_flow_style=False)


def build_project(dest: Path, count: int, vendor_from: Path = REPO / "vendor") -> Path:
    """DEST with templates/ and policies/ copied from this repository, base.yaml, N environments and the
    vendored charts (copied from `vendor_from`, which `krc vendor` filled)."""
    dest.mkdir(parents=True, exist_ok=True)
    for part in PARTS:
        shutil.copytree(REPO / part, dest / part, dirs_exist_ok=True)
    shutil.copytree(vendor_from, dest / "vendor", dirs_exist_ok=True)
    envs = dest / "environments"
    envs.mkdir(exist_ok=True)
    shutil.copy(REPO / "environments" / "base.yaml", envs / "base.yaml")
    for i in range(count):
        (envs / f"{environment_name(i)}.yaml").write_text(environment_text(environment(i)), encoding="utf-8")
    return dest


def touch_one(dest: Path, i: int, revision: int) -> Path:
    """Change environment i (its job's epochs): what a one-environment pull request does."""
    data = environment(i)
    data["jobs"][0]["entrypoint"] += f" --revision {revision}"
    path = dest / "environments" / f"{environment_name(i)}.yaml"
    path.write_text(environment_text(data), encoding="utf-8")
    return path


if __name__ == "__main__":
    build_project(Path(sys.argv[1]), int(sys.argv[2]))
