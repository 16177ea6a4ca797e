"""GCS fault tolerance is configured once, through `gcsFaultToleranceOptions`.

The legacy annotation `ray.io/ft-enabled`, the head env `RAY_REDIS_ADDRESS`, `REDIS_PASSWORD`,
`rayStartParams.redis-password` and the annotation `ray.io/external-storage-namespace` conflict with the
options; a Redis user name only goes in `gcsFaultToleranceOptions.redisUsername`.

Fails:

    metadata:
      annotations: {ray.io/ft-enabled: "true"}
    spec:
      gcsFaultToleranceOptions: {redisAddress: "redis:6379"}

Passes:

    spec:
      gcsFaultToleranceOptions: {redisAddress: "redis:6379"}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import ClusterView, cluster_views

ABOUT = About("raycluster/gcs-fault-tolerance", "error",
              "GCS fault tolerance is set through gcsFaultToleranceOptions only, without conflicting settings")


def _ft_enabled(cluster: ClusterView) -> bool:
    return (str(cluster.annotations.get("ray.io/ft-enabled", "")).lower() == "true"
            or isinstance(cluster.spec.get("gcsFaultToleranceOptions"), dict))


def check(context: LintContext) -> Iterator[Problem]:
    for cluster in cluster_views(context):
        obj, head = cluster.obj, cluster.head
        options = cluster.spec.get("gcsFaultToleranceOptions")
        env = head.env
        env_path = head.container_path + ("env",)
        annotations_path = ("metadata", "annotations")
        if options is not None and str(cluster.annotations.get("ray.io/ft-enabled", "")) != "":
            yield obj.problem("both the ray.io/ft-enabled annotation and gcsFaultToleranceOptions are set; remove "
                              "the annotation and keep gcsFaultToleranceOptions",
                              annotations_path + ("ray.io/ft-enabled",))
        if not _ft_enabled(cluster) and "RAY_REDIS_ADDRESS" in env:
            yield obj.problem("the head env RAY_REDIS_ADDRESS turns on GCS fault tolerance implicitly; configure "
                              "it with gcsFaultToleranceOptions.redisAddress instead",
                              env_path + (head.env_index("RAY_REDIS_ADDRESS"),))
        if options is not None:
            if str(head.ray_start_params.get("redis-password", "") or ""):
                yield obj.problem("rayStartParams.redis-password conflicts with gcsFaultToleranceOptions; use "
                                  "gcsFaultToleranceOptions.redisPassword",
                                  head.path + ("rayStartParams", "redis-password"))
            for name, field in (("REDIS_PASSWORD", "redisPassword"), ("RAY_REDIS_ADDRESS", "redisAddress")):
                if name in env:
                    yield obj.problem(f"the head env {name} conflicts with gcsFaultToleranceOptions; use "
                                      f"gcsFaultToleranceOptions.{field}", env_path + (head.env_index(name),))
            if str(cluster.annotations.get("ray.io/external-storage-namespace", "")):
                yield obj.problem("the ray.io/external-storage-namespace annotation conflicts with "
                                  "gcsFaultToleranceOptions; use gcsFaultToleranceOptions.externalStorageNamespace",
                                  annotations_path + ("ray.io/external-storage-namespace",))
        if str(head.ray_start_params.get("redis-username", "") or ""):
            yield obj.problem("rayStartParams.redis-username is not supported; use "
                              "gcsFaultToleranceOptions.redisUsername",
                              head.path + ("rayStartParams", "redis-username"))
        elif "REDIS_USERNAME" in env:
            yield obj.problem("the head env REDIS_USERNAME is not supported; "
                              "use gcsFaultToleranceOptions.redisUsername",
                              env_path + (head.env_index("REDIS_USERNAME"),))
