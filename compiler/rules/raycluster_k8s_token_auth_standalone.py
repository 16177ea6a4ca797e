"""Kubernetes token auth (`authOptions.enableK8sTokenAuth`) is only supported on a standalone RayCluster.

Fails:

    kind: RayJob
    spec:
      rayClusterSpec:
        authOptions: {mode: token, enableK8sTokenAuth: true}

Passes:

    kind: RayJob
    spec:
      rayClusterSpec:
        authOptions: {mode: token}
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext, get_in
from .support.ray_objects import cluster_views

ABOUT = About("raycluster/k8s-token-auth-standalone", "error",
              "enableK8sTokenAuth is not used in RayJob, RayService or RayCronJob clusters", versions=">=1.6")


def check(context: LintContext) -> Iterator[Problem]:
    for cluster in cluster_views(context):
        if cluster.owner != "RayCluster" and get_in(cluster.spec, ("authOptions", "enableK8sTokenAuth")) is True:
            yield cluster.obj.problem(f"a {cluster.owner} cannot use Kubernetes token auth; remove "
                                      "authOptions.enableK8sTokenAuth (mode: token alone is supported)",
                                      cluster.at("authOptions", "enableK8sTokenAuth"))
