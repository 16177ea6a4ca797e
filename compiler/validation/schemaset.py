"""A set of CRDs, compiled, that validates and defaults custom resources like the API server would.

Each CRD is compiled once per process and kept by the digest of its canonical form, so building a SchemaSet
from the same chart again (or from another Crd object with the same content) costs a dict lookup. A version's
schema is compiled the first time an object of that version is validated.
"""
from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .. import fieldpath, yamlio
from ..charts.package import Crd
from ..k8s.crds import crd_digest
from ..k8s.objects import object_ref
from ..problems import SEVERITY_ORDER, KrcError, Location, Problem, has_errors
from .nodes import SchemaNode, compile_schema, expand_all
from .walker import Walker, json_copy


@dataclass(frozen=True)
class ValidationResult:
    defaulted: Any  # the object as the API server would store it: defaults applied, unknown fields pruned
    problems: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        return not has_errors(self.problems)


@dataclass(frozen=True, eq=False)
class CrdVersion:
    crd_name: str
    name: str
    served: bool
    deprecated: bool
    deprecation_warning: str
    schema: dict[str, Any] = field(repr=False)

    @functools.cached_property
    def node(self) -> SchemaNode:
        return compile_schema(self.schema, f"CRD {self.crd_name} version {self.name}")


@dataclass(frozen=True, eq=False)
class CompiledCrd:
    name: str
    group: str
    kind: str
    digest: str
    versions: dict[str, CrdVersion]
    storage_version: str


_BY_DIGEST: dict[str, CompiledCrd] = {}
# id(document) -> (document, compiled): the document is kept alive so its id cannot be reused
_BY_IDENTITY: dict[int, tuple[dict[str, Any], CompiledCrd]] = {}


def _digest(document: dict[str, Any]) -> str:
    return crd_digest(document)


def compile_crd(document: dict[str, Any] | Crd) -> CompiledCrd:
    if isinstance(document, Crd):  # a chart's CRD knows its digest without re-encoding the document
        compiled = _BY_DIGEST.get(document.digest)
        if compiled is None:
            compiled = _BY_DIGEST[document.digest] = _read_crd(document.document, document.digest)
        return compiled
    known = _BY_IDENTITY.get(id(document))
    if known is not None and known[0] is document:
        return known[1]
    digest = _digest(document)
    compiled = _BY_DIGEST.get(digest)
    if compiled is None:
        compiled = _BY_DIGEST[digest] = _read_crd(document, digest)
    _BY_IDENTITY[id(document)] = (document, compiled)
    return compiled


def _read_crd(document: dict[str, Any], digest: str) -> CompiledCrd:
    try:
        name = str(document["metadata"]["name"])
        spec = document["spec"]
        group, kind = str(spec["group"]), str(spec["names"]["kind"])
        versions = {}
        for entry in spec["versions"]:
            schema = (entry.get("schema") or {}).get("openAPIV3Schema") or spec.get("validation", {}).get(
                "openAPIV3Schema") or {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            versions[str(entry["name"])] = CrdVersion(
                name, str(entry["name"]), bool(entry.get("served", False)), bool(entry.get("deprecated", False)),
                str(entry.get("deprecationWarning") or ""), schema)
        storage = next((str(v["name"]) for v in spec["versions"] if v.get("storage")), next(iter(versions)))
    except (KeyError, TypeError, AttributeError, StopIteration) as err:
        raise KrcError(f"a CustomResourceDefinition lacks {err} (metadata.name, spec.group, spec.names.kind "
                       "and spec.versions are required); fix the CRD") from None
    return CompiledCrd(name, group, kind, digest, versions, storage)


def _group_version(document: Any) -> tuple[str, str]:
    api_version = document.get("apiVersion") if isinstance(document, dict) else None
    if not isinstance(api_version, str):
        return "", ""
    group, _, version = api_version.rpartition("/")
    return group, version


class SchemaSet:
    """The CRDs callers validate against; `knows` tells whether an object's group belongs to them."""

    def __init__(self, crds: Iterable[CompiledCrd | Crd]):
        # a chart's Crd is compiled (and its document parsed) only when an object of its kind is validated
        self._pending: dict[tuple[str, str], Crd] = {}
        self._compiled: dict[tuple[str, str], CompiledCrd] = {}
        digests: dict[tuple[str, str], str] = {}
        for crd in crds:
            key = (crd.group, crd.kind)
            if digests.setdefault(key, crd.digest) != crd.digest:
                raise KrcError(f"two different CRDs define {crd.group} {crd.kind}; pass one set of CRDs")
            if isinstance(crd, Crd):
                self._pending[key] = crd
            else:
                self._compiled[key] = crd
        self._keys = frozenset(digests)
        self.groups: frozenset[str] = frozenset(group for group, _ in self._keys)

    @classmethod
    def from_crds(cls, crds: Iterable[dict[str, Any] | Crd]) -> SchemaSet:
        return cls(c if isinstance(c, Crd) else compile_crd(c) for c in crds)

    def _crd(self, key: tuple[str, str]) -> CompiledCrd | None:
        compiled = self._compiled.get(key)
        if compiled is None and key in self._pending:
            compiled = self._compiled[key] = compile_crd(self._pending.pop(key))
        return compiled

    @property
    def kinds(self) -> tuple[tuple[str, str], ...]:
        """(group, kind) pairs, sorted."""
        return tuple(sorted(self._keys))

    def compile_all(self) -> None:
        """Compile every version's schema now rather than on first use: a broken CRD fails here."""
        for key in self._keys:
            for version in self._crd(key).versions.values():  # type: ignore[union-attr]
                expand_all(version.node)

    def knows(self, document: Any) -> bool:
        """True when the object's API group is one of these CRDs' groups, so `validate` judges it."""
        return isinstance(document, dict) and _group_version(document)[0] in self.groups

    def validate(self, document: Any, positions: yamlio.PositionLookup | None = None) -> ValidationResult:
        """Problems of one object and its defaulted copy; objects of other groups get no problems.

        With `positions` (from yamlio.load_with_positions) each problem also carries its file location."""
        if not self.knows(document):
            return ValidationResult(json_copy(document), ())
        group, version = _group_version(document)
        kind = document.get("kind")
        crd = self._crd((group, kind)) if isinstance(kind, str) else None
        ref = object_ref(document)
        walker = Walker()
        entry = crd.versions.get(version) if crd else None
        defaulted = json_copy(document)
        if crd is None:
            ours = ", ".join(sorted(k for g, k in self._keys if g == group))
            walker.report((None, "kind"), "schema/unknown-kind",
                          f"kind '{kind}' is not defined by the {group} CRDs given (they define {ours}); "
                          "fix the kind or use CRDs that define it")
        elif entry is None or not entry.served:
            served = ", ".join(sorted(v for v, e in crd.versions.items() if e.served))
            state = "not served" if entry else "not defined"
            walker.report((None, "apiVersion"), "schema/unknown-kind",
                          f"{group}/{version} {kind} is {state} by CRD {crd.name} (served: {served}); "
                          f"use {group}/{crd.storage_version}")
        else:
            if entry.deprecated:
                warning = entry.deprecation_warning or (
                    f"{group}/{version} {kind} is deprecated; use {group}/{crd.storage_version} {kind}")
                walker.report((None, "apiVersion"), "schema/deprecated-version", warning, "warning")
            defaulted = walker.walk(entry.node, document, None)
        problems = [self._problem(ref, found, positions) for found in walker.found]
        return ValidationResult(defaulted, tuple(sorted(set(problems), key=_order)))

    def validate_text(self, text: str, filename: str) -> list[ValidationResult]:
        """Every document of a YAML stream, each problem located at its file:line:column."""
        return [self.validate(document, positions)
                for document, positions in yamlio.load_all_with_positions(text, filename)]

    @staticmethod
    def _problem(ref: str, found: tuple[Any, ...], positions: yamlio.PositionLookup | None) -> Problem:
        linked, rule, message, severity = found
        segments = fieldpath.path_tuple(linked)
        location: Location | None = fieldpath.nearest_location(positions, segments) if positions else None
        return Problem(message, location, severity, rule, ref, segments)


def _order(problem: Problem) -> tuple[Any, ...]:
    # file position first when known, then the field path, so problems read top to bottom
    return (problem.location or Location(""), fieldpath.render(problem.segments), SEVERITY_ORDER[problem.severity],
            problem.rule,
            problem.message)
