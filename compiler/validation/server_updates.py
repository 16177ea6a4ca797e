"""Updates the API server would reject: each custom resource against its version in golden/, through the engine.

The engine's `validate` op runs the API server's own code (k8s.io/apiextensions-apiserver v0.36.1) for an update
of the golden object into the rendered one: transition rules (CEL rules with `oldSelf`, such as KubeRay's
immutable `spec.managedBy`), ratcheting, the metadata checks of an update. An error that the same object would
not meet on create is a change that cannot be applied in place: Argo CD's sync fails on it until the object is
deleted and created again. Findings are `schema/update-rejected`, errors.

Each CRD is sent to the engine once per engine process and named by its digest after that (engine_request).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..charts.package import Crd
from ..diagnostics.problems import Problem
from ..documents import yamlio
from ..k8s.objects import RenderedObject, api_group, key_of, object_ref
from ..native.channel import RawJSON
from . import engine_request

RULE = "schema/update-rejected"
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
FIX = ("delete the object and let the sync create it again, or have Argo CD do that: annotate it with "
       "argocd.argoproj.io/sync-options: Force=true,Replace=true (Replace=true alone sends an update, which is "
       "rejected the same way)")

def golden_objects(golden: Mapping[str, bytes]) -> dict[Any, dict[str, Any]]:
    """The objects of golden/<env>/'s manifests, by identity (group, kind, namespace, name)."""
    found: dict[Any, dict[str, Any]] = {}
    for path, content in golden.items():
        if not path.startswith("manifests/") or not path.endswith((".yaml", ".yml")):
            continue
        for document in yamlio.load_all(content.decode("utf-8", "replace"), path):
            if isinstance(document, dict) and document.get("kind"):
                found[key_of(document)] = document
    return found


def recreated(document: dict[str, Any]) -> bool:
    """Argo CD deletes and creates this object rather than updating it (Force=true with Replace=true)."""
    annotations = (document.get("metadata") or {}).get("annotations") or {}
    options = {o.strip() for o in str(annotations.get(SYNC_OPTIONS, "")).split(",")}
    return {"Force=true", "Replace=true"} <= options


def update_rejections(crds: Iterable[Crd], objects: Sequence[RenderedObject],
                      golden: Mapping[str, bytes]) -> list[Problem]:
    """Every change of a custom resource from golden/ to `objects` that the API server refuses as an update
    but would accept on create (see the module's doc). Objects new in the render, or unchanged, are not asked."""
    by_kind = {(crd.group, crd.kind): crd for crd in crds}
    if not by_kind:
        return []
    stored = golden_objects(golden)
    asked: dict[tuple[str, str], list[RenderedObject]] = {}
    for obj in objects:
        document = obj.document
        kind = (api_group(str(document.get("apiVersion") or "")), str(document.get("kind") or ""))
        old = stored.get(key_of(document))
        if kind in by_kind and old is not None and old != document and not recreated(document):
            asked.setdefault(kind, []).append(obj)
    problems: list[Problem] = []
    for kind, changed in sorted(asked.items()):
        items = [{"object": o.document, "old": stored[key_of(o.document)]} for o in changed]
        crd = by_kind[kind]
        results = engine_request.validate(RawJSON(crd.canonical), crd.digest, items,
                                          f"the API server's check of {len(items)} {kind[1]} update(s)")
        for obj, result in zip(changed, results, strict=True):
            problems.extend(_problem(obj, error) for error in result["errors"] if error.get("updateOnly"))
    return problems


def _problem(obj: RenderedObject, error: dict[str, Any]) -> Problem:
    segments = tuple(s for s in error.get("path") or () if isinstance(s, str | int))
    field = error.get("field") or "the object"
    return Problem(f"the API server rejects this change as an update (golden/ holds the deployed version): "
                   f"{field}: {error.get('message')}", obj.location, "error", RULE, object_ref(obj.document),
                   segments, help=FIX)
