"""Compare two sets of CRDs: which CRDs and versions appeared or went, then each shared version's schema.

Severities are argued in the docstring of `checks`.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..diagnostics.problems import KrcError
from .changes import CrdChange, Severity, sorted_changes
from .checks import SchemaWalk


def _index(crds: Sequence[dict[str, Any]], side: str) -> dict[str, dict[str, Any]]:
    """CRDs by metadata.name, after checking each has what the comparison reads."""
    by_name: dict[str, dict[str, Any]] = {}
    for crd in crds:
        name = (crd.get("metadata") or {}).get("name") if isinstance(crd, dict) else None
        if not isinstance(name, str) or not name:
            raise KrcError(f"a CustomResourceDefinition on the {side} side has no metadata.name; fix the CRD file")
        spec = crd.get("spec")
        versions = spec.get("versions") if isinstance(spec, dict) else None
        if not isinstance(versions, list) or not all(isinstance(v, dict) and v.get("name") for v in versions):
            raise KrcError(f"CRD {name} on the {side} side has no spec.versions list of named versions; "
                           "only apiextensions.k8s.io/v1 CRDs are supported")
        if name in by_name:
            raise KrcError(f"CRD {name} is defined twice on the {side} side; keep one definition")
        by_name[name] = crd
    return by_name


def _versions(crd: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in crd["spec"]["versions"]}


def _storage_version(crd: dict[str, Any]) -> str | None:
    return next((v["name"] for v in crd["spec"]["versions"] if v.get("storage")), None)


def _kind(crd: dict[str, Any]) -> str:
    return str((crd["spec"].get("names") or {}).get("kind", ""))


class _CrdComparison:
    def __init__(self, name: str, old: dict[str, Any], new: dict[str, Any], out: list[CrdChange]):
        self.name, self.old, self.new, self.out = name, old, new, out

    def emit(self, version: str, check: str, severity: Severity, message: str, old: Any = None,
             new: Any = None) -> None:
        self.out.append(CrdChange(self.name, version, "", check, severity, message, old, new))

    def run(self) -> None:
        old_spec, new_spec = self.old["spec"], self.new["spec"]
        if old_spec.get("scope") != new_spec.get("scope"):
            self.emit("", "scope-changed", "breaking", f"scope changed from {old_spec.get('scope')} to "
                      f"{new_spec.get('scope')}: the API server refuses it; every object must be recreated",
                      old_spec.get("scope"), new_spec.get("scope"))
        self._names(old_spec.get("names") or {}, new_spec.get("names") or {})
        if old_spec.get("conversion") != new_spec.get("conversion"):
            self.emit("", "conversion-changed", "warning", "conversion settings changed: check the webhook is "
                      "deployed before the CRD is applied", old_spec.get("conversion"), new_spec.get("conversion"))
        self._versions()

    def _names(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        if old == new:
            return
        if old.get("kind") != new.get("kind"):
            self.emit("", "kind-changed", "breaking", f"kind changed from {old.get('kind')} to {new.get('kind')}",
                      old.get("kind"), new.get("kind"))
        for key in ("shortNames", "categories"):
            removed = sorted(set(old.get(key) or ()) - set(new.get(key) or ()))
            added = sorted(set(new.get(key) or ()) - set(old.get(key) or ()))
            if removed:
                self.emit("", "names-changed", "warning", f"{key} removed: {', '.join(removed)}; kubectl commands "
                          "using them stop working", old.get(key), new.get(key))
            if added:
                self.emit("", "names-changed", "info", f"{key} added: {', '.join(added)}", old.get(key), new.get(key))
        for key in ("singular", "listKind"):
            if old.get(key) != new.get(key):
                self.emit("", "names-changed", "warning", f"{key} changed from {old.get(key)} to {new.get(key)}",
                          old.get(key), new.get(key))

    def _versions(self) -> None:
        before, after = _versions(self.old), _versions(self.new)
        stored = set((self.old.get("status") or {}).get("storedVersions") or ())
        old_storage, new_storage = _storage_version(self.old), _storage_version(self.new)
        if old_storage:
            stored.add(old_storage)
        for name, version in before.items():
            now = after.get(name)
            if version.get("served") and not (now and now.get("served")):
                what = "removed" if now is None else "no longer served"
                self.emit(name, "served-version-removed", "breaking", f"served version {what}: clients and "
                          f"manifests using {name} fail", True, bool(now and now.get("served")))
            elif now is None and name not in stored:
                self.emit(name, "version-removed", "info", "unserved version removed", name, None)
            if now is None and name in stored:
                self.emit(name, "stored-version-removed", "breaking", "a version objects may be stored in was "
                          "removed: the API server rejects the CRD until storedVersions is migrated", name, None)
        for name, version in after.items():
            was = before.get(name)
            if was is None:
                self.emit(name, "version-added", "info", "new version" + (" (served)" if version.get("served") else ""),
                          None, name)
                continue
            if version.get("served") and not was.get("served"):
                self.emit(name, "version-served", "info", "version is now served", False, True)
            self._version_attributes(name, was, version)
            SchemaWalk(self.name, name, self.out).walk((was.get("schema") or {}).get("openAPIV3Schema") or {},
                                                       (version.get("schema") or {}).get("openAPIV3Schema") or {})
        if old_storage != new_storage and new_storage is not None:
            self.emit(new_storage, "storage-version-changed", "breaking", f"storage version changed from "
                      f"{old_storage} to {new_storage}: existing objects stay stored as {old_storage} until "
                      "rewritten; migrate them before removing it", old_storage, new_storage)

    def _version_attributes(self, name: str, was: dict[str, Any], now: dict[str, Any]) -> None:
        if bool(now.get("deprecated")) != bool(was.get("deprecated")):
            if now.get("deprecated"):
                self.emit(name, "version-deprecated", "warning", f"version {name} is now deprecated: move "
                          "manifests to the storage version", False, True)
            else:
                self.emit(name, "version-undeprecated", "info", f"version {name} is no longer deprecated", True, False)
        elif now.get("deprecationWarning") != was.get("deprecationWarning"):
            self.emit(name, "deprecation-warning-changed", "info", "deprecation warning text changed",
                      was.get("deprecationWarning"), now.get("deprecationWarning"))
        old_sub, new_sub = was.get("subresources") or {}, now.get("subresources") or {}
        for key in sorted(old_sub.keys() | new_sub.keys()):
            if key not in new_sub:
                self.emit(name, "subresource-removed", "breaking", f"/{key} subresource removed: clients "
                          f"writing it (the operator, autoscalers) fail", old_sub[key], None)
            elif key not in old_sub:
                self.emit(name, "subresource-added", "warning", f"/{key} subresource added: writes through the "
                          "main endpoint no longer change it", None, new_sub[key])
            elif old_sub[key] != new_sub[key]:
                self.emit(name, "subresource-changed", "warning", f"/{key} subresource settings changed",
                          old_sub[key], new_sub[key])
        for key, check in (("additionalPrinterColumns", "printer-columns-changed"),
                           ("selectableFields", "selectable-fields-changed")):
            if was.get(key) != now.get(key):
                names = [[c.get("name") or c.get("jsonPath") for c in side.get(key) or ()] for side in (was, now)]
                self.emit(name, check, "info", f"{key} changed from {names[0]} to {names[1]}", names[0], names[1])


def compare_crds(old: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]) -> list[CrdChange]:
    """Every change between two sets of CRDs (matched by metadata.name), classified and sorted."""
    before, after = _index(old, "old"), _index(new, "new")
    out: list[CrdChange] = []
    for name in sorted(before.keys() | after.keys()):
        if name not in after:
            out.append(CrdChange(name, "", "", "crd-removed", "breaking", f"CRD removed: deleting it deletes every "
                                 f"{_kind(before[name])} object; Helm never deletes it", name, None))
        elif name not in before:
            versions = ", ".join(_versions(after[name]))
            out.append(CrdChange(name, "", "", "crd-added", "info", f"new CRD {_kind(after[name])} ({versions}): "
                                 "helm upgrade does not install it; apply it first", None, name))
        else:
            _CrdComparison(name, before[name], after[name], out).run()
    return sorted_changes(out)
