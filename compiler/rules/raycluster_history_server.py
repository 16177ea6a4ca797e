"""The history server collector needs an image and a storage backend with its settings.

`historyServerOptions.collectorOptions` must be set, with an `image` and an env `STORAGE_BACKEND` holding a
literal value; the backend's own variables must be present (GCS: GCS_BUCKET; S3: S3_REGION; ALIYUNOSS:
OSS_BUCKET, OSS_ENDPOINT, OSS_REGION; AZUREBLOB: a connection string or an account URL, by
AZURE_STORAGE_AUTH_MODE). Variables KubeRay injects, and a container named `ray-history-collector`, are reserved.

Fails:

    historyServerOptions:
      collectorOptions:
        image: collector:v1
        env: [{name: STORAGE_BACKEND, value: S3}]

Passes:

    historyServerOptions:
      collectorOptions:
        image: collector:v1
        env: [{name: STORAGE_BACKEND, value: S3}, {name: S3_REGION, value: us-west-2}]
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_views, env_by_name

ABOUT = About("raycluster/history-server", "error",
              "historyServerOptions has a collector image, a storage backend and that backend's settings",
              versions=">=1.7")

RESERVED_ENV = ("POD_IP", "FQ_RAY_IP", "RAY_CLUSTER_NAME", "RAY_CLUSTER_NAMESPACE", "RAY_ROLE", "OWNER_KIND",
                "OWNER_NAME", "EVENTS_PORT")
BACKEND_NEEDS = {"GCS": ("GCS_BUCKET",), "S3": ("S3_REGION",),
                 "ALIYUNOSS": ("OSS_BUCKET", "OSS_ENDPOINT", "OSS_REGION")}
COLLECTOR = "ray-history-collector"


def _set(env: dict[str, dict[str, Any]], name: str) -> bool:
    entry = env.get(name)
    return entry is not None and (bool(entry.get("value")) or entry.get("valueFrom") is not None)


def _backend_problems(env: dict[str, dict[str, Any]], backend: str) -> Iterator[str]:
    for name in BACKEND_NEEDS.get(backend, ()):
        if not _set(env, name):
            yield f"STORAGE_BACKEND is {backend} but {name} is not set; add it to collectorOptions.env"
    if backend == "AZUREBLOB":
        mode = str((env.get("AZURE_STORAGE_AUTH_MODE") or {}).get("value") or "").strip().lower()
        if mode == "connection_string" and not _set(env, "AZURE_STORAGE_CONNECTION_STRING"):
            yield "AZURE_STORAGE_AUTH_MODE is connection_string but AZURE_STORAGE_CONNECTION_STRING is not set; add it"
        elif mode in ("workload_identity", "default") and not _set(env, "AZURE_STORAGE_ACCOUNT_URL"):
            yield f"AZURE_STORAGE_AUTH_MODE is {mode} but AZURE_STORAGE_ACCOUNT_URL is not set; add it"
        elif mode not in ("connection_string", "workload_identity", "default") and not (
                _set(env, "AZURE_STORAGE_CONNECTION_STRING") or _set(env, "AZURE_STORAGE_ACCOUNT_URL")):
            yield ("STORAGE_BACKEND is AZUREBLOB but neither AZURE_STORAGE_CONNECTION_STRING nor "
                   "AZURE_STORAGE_ACCOUNT_URL is set; add one of them")


def check(context: LintContext) -> Iterator[Problem]:
    for cluster in cluster_views(context):
        options = cluster.spec.get("historyServerOptions")
        if options is None:
            continue
        obj, base = cluster.obj, cluster.at("historyServerOptions")
        collector = options.get("collectorOptions") if isinstance(options, dict) else None
        if not isinstance(collector, dict):
            yield obj.problem("historyServerOptions has no collectorOptions; add collectorOptions with an image and "
                              "STORAGE_BACKEND", base)
            continue
        cbase = base + ("collectorOptions",)
        if not collector.get("image"):
            yield obj.problem("historyServerOptions.collectorOptions.image is not set; set the collector image",
                              cbase)
        env = env_by_name(collector.get("env"))
        for name in RESERVED_ENV:
            if name in env:
                yield obj.problem(f"collectorOptions.env sets {name}, which KubeRay injects into the collector; "
                                  "remove it", cbase + ("env",))
        backend = env.get("STORAGE_BACKEND")
        if backend is None or not backend.get("value"):
            yield obj.problem("collectorOptions.env has no literal STORAGE_BACKEND value; add "
                              "{name: STORAGE_BACKEND, value: GCS|S3|AZUREBLOB|ALIYUNOSS}", cbase + ("env",))
        else:
            for message in _backend_problems(env, str(backend["value"]).upper()):
                yield obj.problem(message, cbase + ("env",))
        for group in cluster.groups:
            if any(c.get("name") == COLLECTOR for c in group.containers):
                what = "the head pod template" if group.is_head else f"worker group '{group.name}'"
                yield obj.problem(f"{what} defines a container named '{COLLECTOR}', which KubeRay adds for the "
                                  "history server; rename the container",
                                  group.path + ("template", "spec", "containers"))
