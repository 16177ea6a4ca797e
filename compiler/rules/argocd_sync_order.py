"""Argo CD applies every object after its Namespace and its CRD, and upgrades the CRDs before the operator.

The rule replays the sync of the environment's Argo CD Applications (see compiler/k8s/argocd_sync.py): the child
Applications by wave (an app-of-apps applies one wave, and with the Application health check waits for it, before
the next; Applications of one wave run side by side and cannot count on each other), and inside each
Application its objects by resource wave, Argo CD's kind order and name, after the destination namespace when
`CreateNamespace=true`. What each Application deploys comes from its source: the krc plugin's `crds` and
`applications` parameters select from the environment's objects and the chart's CRDs, and its `operator`
parameter the chart's objects as the pinned Helm renders them; a Helm source of the operator chart deploys the
same objects (`helm template`). It reports an object applied before its Namespace
exists, a custom resource or the operator before their CRDs, CRDs applied client-side (too big for the
last-applied annotation), a CRDs application whose spec does not change with the chart version (the root
app then has nothing to order on a chart bump, and the operator may be upgraded first), and an object two
Applications deploy (Argo CD warns of a shared resource and the two overwrite each other on every sync; e.g. a
workloads app that leaves the `operator` parameter at its default, include, beside the operator app).

Fails (environment): the operator app (wave -1) creates a Role in ray-prod, which only the workloads app
(wave 0) creates:

    kind: Application  # crds, wave -2, plugin crds=only
    kind: Application  # operator, wave -1, plugin operator=only (a Role in ray-prod)
    kind: Application  # workloads, wave 0, plugin crds=exclude (deploys Namespace ray-prod)

Passes: the Namespace in the CRDs app (wave -2; `crds=only` selects Namespaces with the CRDs), whose plugin
parameters carry `chartVersion`.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics.problems import Problem
from ..k8s.argocd_sync import (
    BUILTIN_NAMESPACES,
    CRD_ANNOTATIONS,
    SYNC_OPTIONS,
    PluginChoice,
    plugin_selection,
    resource_sync_options,
    sync_key,
    wave_of,
)
from .rule import About
from .support.context import LintContext, LintObject

ABOUT = About("argocd/sync-order", "error",
              "Argo CD's sync order creates every Namespace and CRD before what needs them, and CRDs before the "
              "operator", environment_only=True)

ARGOCD_GROUP = "argoproj.io"
ROLE_LABEL = "krc.dev/argocd-role"
CLUSTER_SCOPED = frozenset({"Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding",
                            "PersistentVolume", "StorageClass", "IngressClass", "APIService", "PriorityClass",
                            "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"})


@dataclass
class Placed:
    """One object as an Application applies it, and where a finding about it points."""

    document: dict[str, Any]
    origin: LintObject | None  # None for the chart's CRDs (no environment line made them)


@dataclass
class World:
    namespaces: set[str] = field(default_factory=lambda: set(BUILTIN_NAMESPACES))
    crds: set[tuple[str, str]] = field(default_factory=set)  # (group, kind) established


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def _is_application(obj: LintObject) -> bool:
    return obj.kind == "Application" and _group(obj.api_version) == ARGOCD_GROUP


def _parameters(app: dict[str, Any]) -> dict[str, str]:
    plugin = ((app.get("spec") or {}).get("source") or {}).get("plugin") or {}
    return {str(p.get("name")): str(p.get("string", "")) for p in plugin.get("parameters") or [] if isinstance(p, dict)}


def _app_options(app: dict[str, Any]) -> set[str]:
    return {str(o) for o in ((app.get("spec") or {}).get("syncPolicy") or {}).get("syncOptions") or []}


def _crd_documents(context: LintContext) -> list[dict[str, Any]]:
    crds = context.chart.crds if context.chart is not None else ()
    return [{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
             "metadata": {"name": c.name, "annotations": dict(CRD_ANNOTATIONS)},
             "spec": {"group": c.group, "names": {"kind": c.kind}}} for c in crds]


@dataclass(frozen=True)
class Plugin:
    """What the krc plugin chooses from, the same for every Application of the environment."""

    workloads: list[dict[str, Any]]
    crds: list[dict[str, Any]]
    applications: list[dict[str, Any]]
    operator: list[dict[str, Any]]
    by_id: dict[int, LintObject]  # the object each document is, by the document's id

    @classmethod
    def of(cls, context: LintContext, children: list[LintObject]) -> Plugin:
        by_id = {id(o.document): o for o in context.objects}
        by_id.update({id(o.document): o for o in context.chart_objects})
        return cls([o.document for o in context.objects if _group(o.api_version) != ARGOCD_GROUP],
                   _crd_documents(context), [c.document for c in children],
                   [o.document for o in context.chart_objects], by_id)


def _deployed(context: LintContext, app: LintObject, plugin: Plugin) -> list[Placed] | None:
    """What one Application applies; None for a source krc cannot see into."""
    source = (app.document.get("spec") or {}).get("source") or {}
    if source.get("chart"):
        if context.chart is None or source.get("chart") != context.chart.name:
            return None
        return [Placed(o.document, o) for o in context.chart_objects]
    if not source.get("plugin"):
        return None
    selected = plugin_selection(plugin.workloads, plugin.crds, plugin.applications, plugin.operator,
                                PluginChoice.of(_parameters(app.document)))
    return [Placed(d, plugin.by_id.get(id(d))) for d in selected]


def _destination_namespace(app: dict[str, Any]) -> str:
    return str(((app.get("spec") or {}).get("destination") or {}).get("namespace") or "")


def _problem(context: LintContext, app: LintObject, placed: Placed, message: str) -> Problem:
    if placed.origin is not None:
        return placed.origin.problem(message)
    return app.problem(message)


def _replay_app(context: LintContext, app: LintObject, deployed: list[Placed], world: World,
                created: World) -> Iterator[Problem]:
    name = app.name
    destination = _destination_namespace(app.document)
    namespaces = set(world.namespaces)
    if "CreateNamespace=true" in _app_options(app.document) and destination:
        namespaces.add(destination)
        created.namespaces.add(destination)
    crds = set(world.crds)
    chart_kinds = {(c.group, c.kind) for c in context.chart.crds} if context.chart is not None else set()
    server_side = "ServerSideApply=true" in _app_options(app.document)
    for placed in deployed:  # a CRD goes before its custom resources inside one sync (gitops-engine adjustDeps)
        doc = placed.document
        if doc.get("kind") == "CustomResourceDefinition":
            spec = doc.get("spec") or {}
            crds.add((str(spec.get("group")), str((spec.get("names") or {}).get("kind"))))
            created.crds.add((str(spec.get("group")), str((spec.get("names") or {}).get("kind"))))
            options = resource_sync_options(doc)
            if not (server_side or {"ServerSideApply=true", "Replace=true"} & options):
                yield _problem(context, app, placed, f"Application {name} applies CRD {doc['metadata']['name']} "
                               "client-side, and KubeRay's CRDs exceed the 262144-byte last-applied annotation; "
                               f"add ServerSideApply=true to its syncOptions or the CRD's {SYNC_OPTIONS}")
    for placed in sorted(deployed, key=lambda p: sync_key(p.document)):
        doc = placed.document
        kind = str(doc.get("kind") or "")
        meta = doc.get("metadata") or {}
        ref = f"{kind} {meta.get('name')}"
        namespace = "" if kind in CLUSTER_SCOPED else str(meta.get("namespace") or destination)
        if namespace and namespace not in namespaces:
            yield _problem(context, app, placed, f"Application {name} (wave {wave_of(app.document)}) creates "
                           f"{ref} in namespace {namespace} before anything creates that namespace, so a fresh "
                           f"sync fails with 'namespace not found'; add {namespace} to namespaces (the CRDs "
                           "application creates them first)")
        if kind == "Namespace":
            namespaces.add(str(meta.get("name")))
            created.namespaces.add(str(meta.get("name")))
        key = (_group(str(doc.get("apiVersion") or "")), kind)
        if key in chart_kinds and key not in crds:
            yield _problem(context, app, placed, f"Application {name} creates {ref} before its CRD is applied; "
                           "deploy the CRDs in an earlier wave (the CRDs application)")
        if kind == "Deployment" and placed.origin is not None and placed.origin in context.chart_objects \
                and not chart_kinds <= crds:
            yield _problem(context, app, placed, f"Application {name} starts the operator before its CRDs are "
                           "applied (and on a chart bump, before they are upgraded); give the CRDs application "
                           "an earlier wave than the operator's")


def _shared(context: LintContext, app: LintObject, deployed: list[Placed],
            owners: dict[tuple[str, str, str], str]) -> Iterator[Problem]:
    """Objects an earlier Application already deploys (`owners` grows as the replay goes)."""
    destination = _destination_namespace(app.document)
    for placed in deployed:
        kind = str(placed.document.get("kind") or "")
        meta = placed.document.get("metadata") or {}
        key = (kind, "" if kind in CLUSTER_SCOPED else str(meta.get("namespace") or destination), str(meta.get("name")))
        first = owners.setdefault(key, app.name)
        if first != app.name:
            where = f" in namespace {key[1]}" if key[1] else ""
            yield _problem(context, app, placed, f"Applications {first} and {app.name} both deploy {kind} "
                           f"{key[2]}{where}: Argo CD reports a shared resource and each sync overwrites the other's; "
                           "deploy it from one of them (for the operator chart's objects: the plugin parameter "
                           "operator=exclude on every Application but the operator's)")


def check(context: LintContext) -> Iterator[Problem]:
    apps = [o for o in context.objects if _is_application(o)]
    roots = [a for a in apps if (a.metadata.get("labels") or {}).get(ROLE_LABEL) == "root"
             or _parameters(a.document).get("applications") == "only"]
    children = [a for a in apps if a not in roots]
    if not children:
        return
    world = World()
    owners: dict[tuple[str, str, str], str] = {}
    plugin = Plugin.of(context, children)
    for wave in sorted({wave_of(a.document) for a in children}):
        created = World(set(), set())
        for app in sorted((a for a in children if wave_of(a.document) == wave), key=lambda a: a.name):
            deployed = _deployed(context, app, plugin)
            if deployed is None:
                continue
            yield from _replay_app(context, app, deployed, world, created)
            yield from _shared(context, app, deployed, owners)
            parameters = _parameters(app.document)
            if parameters.get("crds") == "only" and context.chart is not None \
                    and parameters.get("chartVersion") != context.chart.version:
                yield app.problem(f"Application {app.name} deploys the CRDs but its spec does not name chart "
                                  f"version {context.chart.version}, so a chart bump leaves it unchanged and the "
                                  "root app has nothing to order: the operator may be upgraded before its CRDs; "
                                  f"add the plugin parameter chartVersion: '{context.chart.version}'")
        world.namespaces |= created.namespaces
        world.crds |= created.crds
