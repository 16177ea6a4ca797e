"""KubeRay objects are deployed in namespaces the operator watches and has RBAC in.

An operator limited by `watchNamespace` (or `singleNamespaceInstall`, which watches the release namespace)
ignores objects elsewhere: they are accepted and nothing happens. With `singleNamespaceInstall`, the chart
grants the operator a Role only in the watched namespaces, and none when `rbacEnable` or
`crNamespacedRbacEnable` is false.

Fails (environment):

    namespace: ml
    operator:
      watchNamespaces: [ray-system]

Passes:

    namespace: ml
    operator:
      watchNamespaces: [ml]
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext

ABOUT = About("operator/watched-namespaces", "error",
              "objects are in namespaces the operator watches and has RBAC for", environment_only=True)


def _watched(context: LintContext) -> list[str]:
    values = context.helm_values or {}
    operator = context.environment.get("operator") or {}
    watch = operator.get("watchNamespaces") or values.get("watchNamespace") or []
    if isinstance(watch, str):
        watch = [w.strip() for w in watch.split(",") if w.strip()]
    if not watch and values.get("singleNamespaceInstall") is True:
        watch = [str(operator.get("namespace") or "default")]
    return [str(w) for w in watch]


def check(context: LintContext) -> Iterator[Problem]:
    watched = _watched(context)
    if not watched:
        return  # cluster-wide: every namespace
    values = context.helm_values or {}
    no_role = values.get("singleNamespaceInstall") is True and (
        values.get("rbacEnable") is False or values.get("crNamespacedRbacEnable") is False)
    default_namespace = str(context.environment.get("namespace") or "default")
    for obj in context.kuberay_objects():
        namespace = obj.namespace or default_namespace
        if namespace not in watched:
            yield obj.problem(f"{obj.kind} {obj.name} is in namespace '{namespace}', which the operator does not "
                              f"watch ({', '.join(watched)}), so nothing will reconcile it; add the namespace to "
                              "operator.watchNamespaces or move the object")
        elif no_role:
            yield obj.problem(f"the operator watches namespace '{namespace}' but the chart creates no Role there "
                              "(rbacEnable or crNamespacedRbacEnable is false); grant the operator RBAC in that "
                              "namespace or turn crNamespacedRbacEnable back on")
