"""The Ray dashboard (8265), Ray Client (10001) and Serve (8000) are not exposed without authentication.

Anyone who reaches the dashboard or the client port can run code on the cluster. Exposure means a head
`serviceType` or Service of type LoadBalancer/NodePort, `enableIngress`, or an Ingress/HTTPRoute pointing at
the head service, while the cluster has no `authOptions.mode: token` and the Ingress no auth annotation.

Fails:

    kind: RayCluster
    spec:
      headGroupSpec:
        serviceType: LoadBalancer

Passes:

    kind: RayCluster
    spec:
      authOptions: {mode: token}
      headGroupSpec:
        serviceType: LoadBalancer
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext, LintObject, get_in
from .support.ray_objects import cluster_views

ABOUT = About("security/exposed-endpoints", "warning",
              "dashboard, client and serve ports are not exposed outside the cluster without auth")

RAY_PORTS = {8265: "dashboard", 10001: "Ray Client", 8000: "Serve"}
RAY_PORT_NAMES = {"dashboard": 8265, "client": 10001, "serve": 8000}
EXTERNAL = ("LoadBalancer", "NodePort")


def _authenticated(context: LintContext) -> set[str]:
    """Names of clusters (and RayServices) with token auth; their head services are '<name>-head-svc'."""
    return {c.obj.name for c in cluster_views(context) if get_in(c.spec, ("authOptions", "mode")) == "token"}


def _ray_port(port: Any) -> str:
    if isinstance(port, int):
        return RAY_PORTS.get(port, "")
    if isinstance(port, str):
        return RAY_PORTS.get(RAY_PORT_NAMES.get(port, 0), "")
    return ""


def _head_cluster(service_name: str) -> str:
    return service_name[: -len("-head-svc")] if service_name.endswith("-head-svc") else ""


def _has_auth_annotation(obj: LintObject) -> bool:
    return any("auth" in str(key).lower() for key in (obj.metadata.get("annotations") or {}))


def _backends(value: Any) -> Iterator[tuple[str, Any]]:
    """(service name, port) of every Ingress backend or HTTPRoute backendRef in a document."""
    if isinstance(value, dict):
        service = value.get("service")
        if isinstance(service, dict) and "name" in service:
            port = service.get("port") or {}
            yield str(service["name"]), port.get("number", port.get("name")) if isinstance(port, dict) else port
        if value.get("kind", "Service") == "Service" and "name" in value and "port" in value and "group" not in value:
            yield str(value["name"]), value["port"]
        for child in value.values():
            yield from _backends(child)
    elif isinstance(value, list):
        for child in value:
            yield from _backends(child)


def check(context: LintContext) -> Iterator[Problem]:
    secured = _authenticated(context)
    for cluster in cluster_views(context):
        if cluster.obj.name in secured or cluster.owner not in ("RayCluster", "RayService"):
            continue
        head = cluster.head
        kind = head.spec.get("serviceType") or get_in(head.spec, ("headService", "spec", "type"))
        if kind in EXTERNAL:
            yield cluster.obj.problem(f"the head service is of type {kind}, exposing the dashboard and Ray Client "
                                      "without authentication; use ClusterIP, or set authOptions.mode: token",
                                      head.path + ("serviceType",))
        if head.spec.get("enableIngress") is True:
            yield cluster.obj.problem("enableIngress exposes the dashboard without authentication; set "
                                      "authOptions.mode: token or put an authenticating proxy in front",
                                      head.path + ("enableIngress",))
    for obj in context.objects:
        if obj.kind == "Service" and get_in(obj.document, ("spec", "type")) in EXTERNAL:
            ports = get_in(obj.document, ("spec", "ports"), [])
            exposed = sorted({_ray_port(p.get("targetPort", p.get("port"))) or _ray_port(p.get("port"))
                              for p in ports if isinstance(p, dict)} - {""})
            selected = str(get_in(obj.document, ("spec", "selector", "ray.io/cluster"), ""))
            if exposed and selected not in secured:
                yield obj.problem(f"Service of type {get_in(obj.document, ('spec', 'type'))} exposes the Ray "
                                  f"{', '.join(exposed)} port(s) without authentication; use ClusterIP or enable "
                                  "token auth on the cluster", ("spec", "type"))
        elif obj.kind in ("Ingress", "HTTPRoute") and not _has_auth_annotation(obj):
            for service, port in _backends(obj.document.get("spec")):
                what = _ray_port(port)
                if what and _head_cluster(service) not in secured:
                    yield obj.problem(f"{obj.kind} routes to the Ray {what} port of {service} without "
                                      "authentication; add an auth layer or set authOptions.mode: token on the cluster",
                                      ("spec",))
                    break
