"""Token authentication needs a Ray version that has it, and its options must agree.

`authOptions.mode: token` needs `rayVersion` 2.52.0 or later; `enableK8sTokenAuth` needs mode token, Ray
2.55.0 or later, and no `secretName`.

Fails:

    rayVersion: "2.50.0"
    authOptions: {mode: token}

Passes:

    rayVersion: "2.52.0"
    authOptions: {mode: token}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_views
from .support.versions import parse_version

ABOUT = About("raycluster/auth-options", "error",
              "token auth has a Ray version that supports it and consistent options", versions=">=1.5")


def check(context: LintContext) -> Iterator[Problem]:
    for cluster in cluster_views(context):
        auth = cluster.spec.get("authOptions")
        if not isinstance(auth, dict):
            continue
        obj, base = cluster.obj, cluster.at("authOptions")
        k8s_token = auth.get("enableK8sTokenAuth") is True
        if auth.get("mode") != "token":
            if k8s_token:
                yield obj.problem("authOptions.enableK8sTokenAuth is on but authOptions.mode is not 'token'; set "
                                  "mode: token", base + ("enableK8sTokenAuth",))
            continue
        version = cluster.ray_version
        parsed = parse_version(version)
        if not version:
            yield obj.problem("authOptions.mode is token but rayVersion is not set; set rayVersion to 2.52.0 or "
                              "later", base + ("mode",))
        elif parsed is None:
            yield obj.problem(f"authOptions.mode is token but rayVersion '{version}' is not a version; write it "
                              "like 2.52.0", cluster.at("rayVersion"))
        elif parsed < (2, 52, 0):
            yield obj.problem(f"authOptions.mode token needs Ray 2.52.0 or later, rayVersion is {version}; upgrade "
                              "Ray", cluster.at("rayVersion"))
        elif k8s_token and parsed < (2, 55, 0):
            yield obj.problem(f"authOptions.enableK8sTokenAuth needs Ray 2.55.0 or later, rayVersion is {version}; "
                              "upgrade Ray", base + ("enableK8sTokenAuth",))
        if k8s_token and auth.get("secretName"):
            yield obj.problem("authOptions.enableK8sTokenAuth and authOptions.secretName are both set; remove "
                              "secretName (Kubernetes tokens replace the shared secret)", base + ("secretName",))
