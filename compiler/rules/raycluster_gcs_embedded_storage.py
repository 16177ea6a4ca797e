"""The embedded GCS backend (`backend: rocksdb`) owns its storage; Redis settings and reserved names clash.

With `rocksdb`, Redis fields are meaningless; `storage.claimName` (an existing PVC) excludes `size`,
`storageClassName` and `accessModes`; the env `RAY_gcs_storage`/`RAY_gcs_storage_path`, the volume
`gcs-storage` and the mount path `/data/gcs` are managed by KubeRay. With Redis, `storage` does not apply.

Fails:

    gcsFaultToleranceOptions:
      backend: rocksdb
      redisAddress: redis:6379

Passes:

    gcsFaultToleranceOptions:
      backend: rocksdb
      storage: {size: 1Gi}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_views

ABOUT = About("raycluster/gcs-embedded-storage", "error",
              "the rocksdb GCS backend has no Redis settings and leaves its storage names to KubeRay", versions=">=1.7")

RESERVED_VOLUME = "gcs-storage"
RESERVED_PATH = "/data/gcs"


def check(context: LintContext) -> Iterator[Problem]:
    for cluster in cluster_views(context):
        options = cluster.spec.get("gcsFaultToleranceOptions")
        if not isinstance(options, dict):
            continue
        obj, head = cluster.obj, cluster.head
        base = cluster.at("gcsFaultToleranceOptions")
        storage = options.get("storage")
        if options.get("backend") != "rocksdb":
            if storage is not None:
                yield obj.problem("gcsFaultToleranceOptions.storage only applies to the rocksdb backend; remove it "
                                  "or set backend: rocksdb", base + ("storage",))
            continue
        for field in ("redisAddress", "redisUsername", "redisPassword", "externalStorageNamespace"):
            if options.get(field) not in (None, "", {}):
                yield obj.problem(f"gcsFaultToleranceOptions.{field} has no effect with backend rocksdb; remove it",
                                  base + (field,))
        if isinstance(storage, dict) and storage.get("claimName") and any(
                storage.get(k) for k in ("size", "storageClassName", "accessModes")):
            yield obj.problem("gcsFaultToleranceOptions.storage.claimName names an existing claim, so size, "
                              "storageClassName and accessModes must not be set; keep one of the two ways",
                              base + ("storage", "claimName"))
        for name in ("RAY_gcs_storage", "RAY_gcs_storage_path"):
            if name in head.env:
                yield obj.problem(f"the head env {name} is managed by KubeRay with the rocksdb backend; remove it",
                                  head.container_path + ("env", head.env_index(name)))
        for i, mount in enumerate(head.container.get("volumeMounts") or []):
            if isinstance(mount, dict) and (mount.get("name") == RESERVED_VOLUME
                                            or mount.get("mountPath") == RESERVED_PATH):
                yield obj.problem(f"the head container mounts '{mount.get('name')}' at {mount.get('mountPath')}, "
                                  f"which KubeRay reserves for the rocksdb backend ({RESERVED_VOLUME} at "
                                  f"{RESERVED_PATH}); use another name and path",
                                  head.container_path + ("volumeMounts", i))
        for i, volume in enumerate(head.template_spec.get("volumes") or []):
            if isinstance(volume, dict) and volume.get("name") == RESERVED_VOLUME:
                yield obj.problem(f"the head pod defines volume '{RESERVED_VOLUME}', which KubeRay creates for the "
                                  "rocksdb backend; rename the volume", head.path + ("template", "spec", "volumes", i))
