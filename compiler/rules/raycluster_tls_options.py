"""With operator-managed mTLS (`tlsOptions.enabled: true`), TLS env variables and mounts are KubeRay's.

The head, the worker containers and the autoscaler must not set RAY_USE_TLS, RAY_TLS_SERVER_CERT,
RAY_TLS_SERVER_KEY or RAY_TLS_CA_CERT, nor mount a volume named `ray-tls` or at `/etc/ray/tls`.

Fails:

    tlsOptions: {enabled: true}
    headGroupSpec:
      template:
        spec:
          containers:
          - name: ray-head
            env: [{name: RAY_USE_TLS, value: "1"}]

Passes:

    tlsOptions: {enabled: true}
    headGroupSpec:
      template:
        spec:
          containers:
          - name: ray-head
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_views, env_by_name

ABOUT = About("raycluster/tls-options", "error",
              "operator-managed mTLS leaves TLS env variables and mounts to KubeRay", versions=">=1.7")

TLS_ENV = ("RAY_USE_TLS", "RAY_TLS_SERVER_CERT", "RAY_TLS_SERVER_KEY", "RAY_TLS_CA_CERT")
TLS_VOLUME, TLS_PATH = "ray-tls", "/etc/ray/tls"


def _conflicts(env: Any, mounts: Any, where: str) -> Iterator[str]:
    for name in TLS_ENV:
        if name in env_by_name(env):
            yield f"{where} sets {name} while tlsOptions is enabled; remove it, the operator configures TLS"
    for mount in mounts if isinstance(mounts, list) else []:
        if not isinstance(mount, dict):
            continue
        if mount.get("name") == TLS_VOLUME:
            yield f"{where} mounts a volume named '{TLS_VOLUME}', which the operator reserves for TLS; rename it"
        elif mount.get("mountPath") == TLS_PATH:
            yield f"{where} mounts a volume at {TLS_PATH}, which the operator reserves for TLS; use another path"


def check(context: LintContext) -> Iterator[Problem]:
    for cluster in cluster_views(context):
        options = cluster.spec.get("tlsOptions")
        if not isinstance(options, dict) or options.get("enabled") is not True:
            continue
        for group in cluster.groups:
            where = "the head container" if group.is_head else f"worker group '{group.name}'"
            for message in _conflicts(group.container.get("env"), group.container.get("volumeMounts"), where):
                yield cluster.obj.problem(message, group.container_path)
        autoscaler = cluster.autoscaler_options
        for message in _conflicts(autoscaler.get("env"), autoscaler.get("volumeMounts"), "autoscalerOptions"):
            yield cluster.obj.problem(message, cluster.at("autoscalerOptions"))
