"""Helpers for the schema validator tests: the real KubeRay charts, samples and Argo CD CRDs from ../shared.

A plain module (not conftest.py) so its name cannot clash with other test folders' conftest modules."""
from __future__ import annotations

import copy
import functools
from pathlib import Path

from compiler.charts.package import read_chart
from compiler.validation import SchemaSet, load_crds_from_path

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
CHARTS = SHARED / "kuberay" / "charts"
SAMPLES = SHARED / "kuberay" / "samples"
ARGOCD_CRDS = SHARED / "argocd" / "crds"
IMAGE = "rayproject/ray:2.58.0-py312"


@functools.cache
def kuberay_schemas(version: str) -> SchemaSet:
    return SchemaSet.from_crds(read_chart(CHARTS / f"kuberay-operator-{version}.tgz").crds)


@functools.cache
def argocd_schemas() -> SchemaSet:
    return SchemaSet.from_crds(load_crds_from_path(ARGOCD_CRDS))


_CLUSTER = {
    "apiVersion": "ray.io/v1",
    "kind": "RayCluster",
    "metadata": {"name": "demo", "namespace": "ml"},
    "spec": {
        "headGroupSpec": {
            "rayStartParams": {"num-cpus": "0"},
            "template": {"spec": {"containers": [{"name": "ray-head", "image": IMAGE}]}},
        },
        "workerGroupSpecs": [{
            "groupName": "gpu",
            "replicas": 1,
            "minReplicas": 0,
            "maxReplicas": 2,
            "rayStartParams": {},
            "template": {"spec": {"containers": [
                {"name": "ray-worker", "image": IMAGE,
                 "resources": {"limits": {"cpu": 2, "memory": "8Gi", "nvidia.com/gpu": 1}}}]}},
        }],
    },
}

_JOB = {
    "apiVersion": "ray.io/v1",
    "kind": "RayJob",
    "metadata": {"name": "train", "namespace": "ml"},
    "spec": {"entrypoint": "python train.py", "rayClusterSpec": copy.deepcopy(_CLUSTER["spec"])},
}


def cluster() -> dict:
    """A minimal valid RayCluster (a fresh copy per call, to mutate)."""
    return copy.deepcopy(_CLUSTER)


def job() -> dict:
    """A minimal valid RayJob that creates its cluster."""
    return copy.deepcopy(_JOB)
