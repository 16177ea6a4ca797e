"""Object identity: API group, kind, namespace and name (`ObjectKey`), and the `Kind/namespace/name` reference.

For a change the API version is deliberately not part of it, so `ray.io/v1alpha1` -> `ray.io/v1` reads as a change of
the `apiVersion` field of one object rather than one object deleted and another created (as helm-diff does).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..diagnostics.problems import Location


@dataclass(frozen=True, order=True)
class ObjectKey:
    group: str  # "" for the core API group
    kind: str
    namespace: str  # "" for cluster-scoped objects
    name: str

    @property
    def ref(self) -> str:
        """`Kind namespace/name`, or `Kind name` when cluster-scoped: how a reviewer names an object."""
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"

    def as_dict(self) -> dict[str, str]:
        return {"group": self.group, "kind": self.kind, "namespace": self.namespace, "name": self.name}


def api_group(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def key_of(document: dict[str, Any]) -> ObjectKey:
    meta = document.get("metadata") or {}
    return ObjectKey(api_group(str(document.get("apiVersion") or "")), str(document.get("kind") or ""),
                     str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def object_ref(document: dict[str, Any]) -> str:
    """`Kind/namespace/name`, or `Kind/name` when the object has no namespace: how findings name an object."""
    raw_meta = document.get("metadata")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    name = meta.get("name") or (f"{meta['generateName']}*" if meta.get("generateName") else "<unnamed>")
    kind = document.get("kind") or "<no kind>"
    return f"{kind}/{meta['namespace']}/{name}" if meta.get("namespace") else f"{kind}/{name}"


@dataclass(frozen=True)
class RenderedObject:
    document: dict[str, Any]
    template: str  # the template that produced it, relative to the project
    location: Location | None  # where its environment item was set, when the template names one

    @property
    def ref(self) -> str:
        return object_ref(self.document)
