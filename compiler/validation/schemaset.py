"""A set of CRDs that judges custom resources through the engine: the API server's own validation.

The engine's `validate` op runs k8s.io/apiextensions-apiserver on create: pruning (unknown fields are errors
here, as strict field validation reports them), defaulting, the schema, embedded metadata, list types and the
CRDs' CEL rules with the server's cost limits. `validate_many` sends one request per CRD for a whole batch (the
CRD in full the first time, by digest after that); the answers come back as krc findings (engine_errors) and
each object as the server would store it (pruned and defaulted), which the lint rules read.

What stays here: which CRD an object belongs to (a kind its API group's CRDs do not define is
schema/unknown-kind without asking the engine), and placing each finding at its file position when known.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..charts.package import Crd
from ..diagnostics import fieldpath
from ..diagnostics.problems import SEVERITY_ORDER, KrcError, Location, Problem, Severity, has_errors
from ..documents import yamlio
from ..k8s.crds import crd_digest
from ..k8s.objects import object_ref
from ..native.channel import RawJSON
from . import engine_errors, engine_request


@dataclass(frozen=True)
class ValidationResult:
    defaulted: Any  # the object as the API server would store it: defaults applied, unknown fields pruned
    problems: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        return not has_errors(self.problems)


@dataclass(frozen=True, eq=False)
class CompiledCrd:
    """A CRD as the set knows it: its identity, and the document the engine compiles: a chart's CRD (its
    canonical JSON, decoded only when a schema is asked for) or a document read elsewhere."""

    name: str
    group: str
    kind: str
    digest: str
    source: Crd | dict[str, Any]

    @property
    def document(self) -> dict[str, Any]:
        return self.source.document if isinstance(self.source, Crd) else self.source

    @property
    def sent(self) -> dict[str, Any] | RawJSON:
        """What the engine is sent: a chart's CRD as its canonical text, neither decoded nor encoded again."""
        return RawJSON(self.source.canonical) if isinstance(self.source, Crd) else self.source

    def schema_of(self, version: str) -> Any:
        for entry in self.document["spec"].get("versions") or ():
            if entry.get("name") == version:
                return (entry.get("schema") or {}).get("openAPIV3Schema")
        return None


# id(document) -> (document, digest): the document is kept alive so its id cannot be reused
_DIGESTS: dict[int, tuple[dict[str, Any], str]] = {}


def compile_crd(document: dict[str, Any] | Crd) -> CompiledCrd:
    """The CRD's identity (its digest worked out once per document and process)."""
    if isinstance(document, Crd):
        return CompiledCrd(document.name, document.group, document.kind, document.digest, document)
    known = _DIGESTS.get(id(document))
    if known is None or known[0] is not document:
        known = _DIGESTS[id(document)] = (document, crd_digest(document))
    try:
        name = str(document["metadata"]["name"])
        spec = document["spec"]
        group, kind = str(spec["group"]), str(spec["names"]["kind"])
        if not spec["versions"]:
            raise KeyError("spec.versions")
    except (KeyError, TypeError, AttributeError) as err:
        raise KrcError(f"a CustomResourceDefinition lacks {err} (metadata.name, spec.group, spec.names.kind "
                       "and spec.versions are required); fix the CRD") from None
    return CompiledCrd(name, group, kind, known[1], document)


def _group_version(document: Any) -> tuple[str, str]:
    api_version = document.get("apiVersion") if isinstance(document, dict) else None
    if not isinstance(api_version, str):
        return "", ""
    group, _, version = api_version.rpartition("/")
    return group, version


class SchemaSet:
    """The CRDs callers validate against; `knows` tells whether an object's group belongs to them."""

    def __init__(self, crds: Iterable[CompiledCrd | Crd]):
        self._crds: dict[tuple[str, str], CompiledCrd | Crd] = {}
        for crd in crds:
            key = (crd.group, crd.kind)
            if self._crds.setdefault(key, crd).digest != crd.digest:
                raise KrcError(f"two different CRDs define {crd.group} {crd.kind}; pass one set of CRDs")
        self.groups: frozenset[str] = frozenset(group for group, _ in self._crds)

    @classmethod
    def from_crds(cls, crds: Iterable[dict[str, Any] | Crd]) -> SchemaSet:
        return cls(c if isinstance(c, Crd) else compile_crd(c) for c in crds)

    @property
    def kinds(self) -> tuple[tuple[str, str], ...]:
        """(group, kind) pairs, sorted."""
        return tuple(sorted(self._crds))

    def compile_all(self) -> None:
        """Have the engine load every CRD now rather than on first use: what is not a CRD fails here; a version
        the engine cannot compile (not structural, a rule that does not compile) fails with the first object
        of that version."""
        requests = []
        for key in sorted(self._crds):
            crd = self._crds[key]
            compiled = crd if isinstance(crd, CompiledCrd) else compile_crd(crd)
            requests.append(engine_request.ValidateRequest(compiled.sent, compiled.digest, [],
                                                           f"compiling CRD {compiled.name}"))
        for request in requests:
            request.results()

    def knows(self, document: Any) -> bool:
        """True when the object's API group is one of these CRDs' groups, so `validate` judges it."""
        return isinstance(document, dict) and _group_version(document)[0] in self.groups

    def validate(self, document: Any, positions: yamlio.PositionLookup | None = None) -> ValidationResult:
        """Problems of one object and its defaulted copy; objects of other groups get no problems."""
        return self.validate_many([document], [positions])[0]

    def validate_text(self, text: str, filename: str) -> list[ValidationResult]:
        """Every document of a YAML stream, each problem located at its file:line:column."""
        pairs = list(yamlio.load_all_with_positions(text, filename))
        return self.validate_many([d for d, _ in pairs], [p for _, p in pairs])

    def validate_many(self, documents: Sequence[Any],
                      positions: Sequence[yamlio.PositionLookup | None] | None = None) -> list[ValidationResult]:
        """Each document's result, in order: one engine request per CRD for all its objects, side by side.

        With `positions` (from yamlio.load_with_positions, one per document) problems carry file locations."""
        return self.start_many(documents).results(positions)

    def start_many(self, documents: Sequence[Any]) -> StartedValidation:
        """validate_many's requests sent now, answered meanwhile: `results` waits for them."""
        batches: dict[tuple[str, str], list[int]] = {}
        for index, document in enumerate(documents):
            if self.knows(document):
                batches.setdefault((_group_version(document)[0], str(document.get("kind"))), []).append(index)
        requests = []
        for key, indexes in sorted(batches.items()):
            crd = self._crds.get(key)
            if crd is None:
                continue  # a kind these CRDs do not define: results() says so
            compiled = crd if isinstance(crd, CompiledCrd) else compile_crd(crd)
            items = [{"object": documents[i]} for i in indexes]
            what = f"the API server's validation of {len(items)} {key[1]}(s) against CRD {compiled.name}"
            requests.append((compiled, indexes, engine_request.ValidateRequest(compiled.sent, compiled.digest, items,
                                                                               what)))
        return StartedValidation(self, list(documents), requests)

    def _unknown_kind(self, document: dict[str, Any], key: tuple[str, str],
                      positions: yamlio.PositionLookup | None) -> ValidationResult:
        group, kind = key
        ours = ", ".join(sorted(k for g, k in self._crds if g == group))
        found = engine_errors.Finding(("kind",), "schema/unknown-kind",
                                      f"kind '{kind}' is not defined by the {group} CRDs given (they define {ours})",
                                      "error", "fix the kind, or use a chart version whose CRDs define it")
        return ValidationResult(document, (_problem(object_ref(document), found, positions),))

    @staticmethod
    def _judged(crd: CompiledCrd, document: dict[str, Any], result: dict[str, Any],
                positions: yamlio.PositionLookup | None) -> ValidationResult:
        found = engine_errors.findings(result, document, lambda: crd.schema_of(_group_version(document)[1]),
                                       fieldpath.parse)
        ref = object_ref(document)
        problems = {_problem(ref, f, positions) for f in found}
        stored = result.get("object")
        return ValidationResult(stored if isinstance(stored, dict) else document,
                                tuple(sorted(problems, key=_order)))


class StartedValidation:
    """SchemaSet.start_many's requests under way."""

    def __init__(self, schemas: SchemaSet, documents: list[Any],
                 requests: list[tuple[CompiledCrd, list[int], engine_request.ValidateRequest]]) -> None:
        self._schemas, self._documents, self._requests = schemas, documents, requests

    def results(self, positions: Sequence[yamlio.PositionLookup | None] | None = None) -> list[ValidationResult]:
        """Each document's result, in order (waiting for the engine's answers); with `positions` (one per document)
        problems carry file locations."""
        documents = self._documents
        where: list[yamlio.PositionLookup | None] = list(positions) if positions is not None else \
            [None] * len(documents)
        results: list[ValidationResult | None] = [None] * len(documents)
        for compiled, indexes, request in self._requests:
            for i, result in zip(indexes, request.results(), strict=True):
                results[i] = SchemaSet._judged(compiled, documents[i], result, where[i])
        for index, document in enumerate(documents):
            if results[index] is not None:
                continue
            if self._schemas.knows(document):
                key = (_group_version(document)[0], str(document.get("kind")))
                results[index] = self._schemas._unknown_kind(document, key, where[index])
            else:
                results[index] = ValidationResult(document, ())
        return [r for r in results if r is not None]


def _problem(ref: str, found: engine_errors.Finding, positions: yamlio.PositionLookup | None) -> Problem:
    location: Location | None = fieldpath.nearest_location(positions, found.segments) if positions else None
    severity: Severity = "warning" if found.severity == "warning" else "info" if found.severity == "info" else "error"
    return Problem(found.message, location, severity, found.rule, ref, found.segments, help=found.help)


def _order(problem: Problem) -> tuple[Any, ...]:
    # file position first when known, then the field path, so problems read top to bottom
    return (problem.location or Location(""), fieldpath.render(problem.segments), SEVERITY_ORDER[problem.severity],
            problem.rule, problem.message)
