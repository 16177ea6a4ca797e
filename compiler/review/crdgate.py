"""The CRD upgrade gate: an environment whose CRDs differ from its golden `crds.lock.yaml`.

Helm installs a chart's crds/ on first install only, so a chart bump that changes CRDs needs a separate step.
The gate says which, compares the old chart's CRDs with the new ones (crd-diff), and checks objects across the
upgrade: golden objects against the new schemas (do live objects stay valid?) and newly rendered objects
against the old schemas (still live when the CRDs are not upgraded: unknown fields are pruned silently).

When the old chart's CRDs cannot be read (not vendored, no reachable repository) the gate says so instead of
reporting "no changes": `unavailable` is set, the comparison and the check of new objects are not run, and the
gate blocks (an incomplete comparison needs an approval).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import crddiff
from ..diagnostics.problems import KrcError
from ..documents import yamlio
from ..k8s.objects import key_of
from ..output import layout
from ..validation import SchemaSet
from .approval import Approval, check_approval, expected_approval
from .helm_commands import Release, downgrade_statements, upgrade_commands


@dataclass(frozen=True)
class CrdStatus:
    name: str
    kind: str
    status: str  # added | removed | changed | unchanged
    old_sha256: str
    new_sha256: str

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "kind": self.kind, "status": self.status, "oldSha256": self.old_sha256,
                "newSha256": self.new_sha256}


@dataclass(frozen=True)
class SchemaFinding:
    """An object that fails (or loses a field) under one side's CRD schemas."""

    object: str  # Kind namespace/name
    path: str
    rule: str
    severity: str
    message: str
    pruned: bool  # the API server would drop this field silently

    def as_dict(self) -> dict[str, Any]:
        return {"object": self.object, "path": self.path, "rule": self.rule, "severity": self.severity,
                "message": self.message, "pruned": self.pruned}


@dataclass(frozen=True)
class CrdGate:
    environment: str
    chart: str
    old_version: str
    new_version: str
    crds: tuple[CrdStatus, ...]
    changes: tuple[crddiff.CrdChange, ...]  # old chart's CRDs -> new chart's CRDs
    notes: tuple[str, ...]  # what could not be compared, and why
    golden_under_new: tuple[SchemaFinding, ...]
    rendered_under_old: tuple[SchemaFinding, ...]
    crd_application: str  # the Argo CD Application that applies this environment's CRDs, if rendered
    approval: Approval
    unavailable: str = ""  # why the old CRDs could not be compared and checked against; "" when they were
    release: Release | None = None  # the operator's Helm release, for the plain-Helm commands

    @property
    def compared(self) -> bool:
        """The old chart's CRDs were read: `changes` and `rendered_under_old` are real results."""
        return not self.unavailable

    def named(self, status: str) -> list[CrdStatus]:
        return [c for c in self.crds if c.status == status]

    @property
    def counts(self) -> dict[str, int]:
        return crddiff.severity_counts(self.changes)

    @property
    def blocking(self) -> tuple[str, ...]:
        """Why this upgrade needs an explicit approval (empty: it does not)."""
        return blocking_reasons(self.changes, self.named("removed"), self.golden_under_new, self.notes,
                                self.rendered_under_old)


def blocking_reasons(changes: Sequence[crddiff.CrdChange], removed: Sequence[CrdStatus],
                     golden_under_new: Sequence[SchemaFinding], notes: Sequence[str],
                     rendered_under_old: Sequence[SchemaFinding] = ()) -> tuple[str, ...]:
    """Why the upgrade needs an explicit approval.

    Fields of new objects that the old CRDs prune block like breaking changes: Helm does not upgrade the CRDs,
    so deploying these objects first loses the fields silently (the operator then acts on objects without
    them, e.g. a RayJob without its deadline), and nothing fails to show it. Only the order of the rollout
    prevents it, so a person must confirm it in the approval's reason: the CRDs are applied before the objects.
    """
    reasons = []
    breaking = crddiff.severity_counts(changes)["breaking"]
    if breaking:
        reasons.append(f"{breaking} breaking CRD changes")
    if removed:
        reasons.append("CRDs removed from the chart: " + ", ".join(c.name for c in removed))
    invalid = sorted({f.object for f in golden_under_new if f.severity == "error"})
    if invalid:
        reasons.append(f"{len(invalid)} golden objects invalid under the new CRDs")
    pruned = sorted({(f.object, f.path) for f in rendered_under_old if f.pruned})
    if pruned:
        fields = f"{len(pruned)} field" + "s" * (len(pruned) != 1)
        reasons.append(f"{fields} of new objects pruned by the old CRDs until the new CRDs are applied")
    if notes:
        reasons.append("the CRD comparison is incomplete")
    return tuple(reasons)


@dataclass(frozen=True)
class CrdLock:
    chart: str
    version: str
    digests: dict[str, str]  # CRD name -> sha256
    kinds: dict[str, str]  # CRD name -> kind


def parse_lock(data: bytes | dict[str, Any], source: str) -> CrdLock:
    document = data if isinstance(data, dict) else yamlio.load(data.decode("utf-8"), source)
    try:
        crds = document.get("crds") or []
        return CrdLock(str(document["chart"]), str(document["version"]),
                       {str(c["name"]): str(c["sha256"]) for c in crds},
                       {str(c["name"]): str(c.get("kind", "")) for c in crds})
    except (KeyError, TypeError, AttributeError):
        raise KrcError(f"{source} is not a CRD lock (chart, version, crds with name and sha256); restore it "
                       "from git or accept the render with 'krc golden'") from None


def crd_statuses(old: CrdLock, new: CrdLock) -> tuple[CrdStatus, ...]:
    out = []
    for name in sorted(old.digests.keys() | new.digests.keys()):
        before, after = old.digests.get(name, ""), new.digests.get(name, "")
        status = "added" if not before else "removed" if not after else "unchanged" if before == after else "changed"
        out.append(CrdStatus(name, new.kinds.get(name) or old.kinds.get(name, ""), status, before, after))
    return tuple(out)


def _findings(schemas: SchemaSet, documents: Iterable[dict[str, Any]], pruned_message: str = "") -> list[SchemaFinding]:
    """Each object's problems under `schemas`; with `pruned_message`, that replaces the message of unknown
    fields (the linter's "check the field name" is wrong for a field only the old CRDs lack)."""
    found = []
    judged = [document for document in documents if schemas.knows(document)]
    for document, result in zip(judged, schemas.validate_many(judged), strict=True):
        ref = key_of(document).ref
        for problem in result.problems:
            pruned = problem.rule == "schema/unknown-field"
            message = pruned_message if pruned and pruned_message else problem.message
            found.append(SchemaFinding(ref, problem.path, problem.rule, problem.severity, message, pruned))
    return sorted(set(found), key=lambda f: (f.object, f.path, f.rule, f.message))


def pruned_by_old_crds(chart: str, old_version: str) -> str:
    return (f"the {chart} {old_version} CRDs lack this field, so the API server drops it silently until the new "
            "CRDs are applied: apply the new CRDs (server-side) before deploying these objects")


def unavailable_words(chart: str, old_version: str) -> str:
    return (f"the old CRDs ({chart} {old_version}) are unavailable; run krc vendor with that version pinned or "
            "set KRC_CHART_REPOSITORY")


def _old_crds(project_root: Path, old: CrdLock, notes: list[str]) -> list[dict[str, Any]] | None:
    try:
        records = crddiff.chart_crd_records(old.chart, old.version, project_root)
    except KrcError as err:
        notes.append(f"the CRDs of {old.chart} {old.version} are not available ({err.problems[0].message}); run "
                     f"'krc crd-diff {old.chart}@{old.version} rendered/<env>/crds/' once they are")
        return None
    # each record's digest is worked out once per chart, not once per environment that upgrades from it
    digests = {crd.name: crd.digest for crd in records}
    documents = [crd.document for crd in records]
    if digests != old.digests:
        notes.append(f"the CRDs of {old.chart} {old.version} do not match the golden crds.lock.yaml digests; "
                     "the comparison uses the chart as published")
    return documents


def _crd_application(documents: Iterable[dict[str, Any]]) -> str:
    for document in documents:
        labels = (document.get("metadata") or {}).get("labels") or {}
        if document.get("kind") == "Application" and labels.get("krc.dev/argocd-role") == "crds":
            return str(document["metadata"]["name"])
    return ""


def crd_gate(project_root: Path, environment: str, golden_lock: bytes | None,
             golden_documents: Sequence[dict[str, Any]], chart: Any,
             rendered_documents: Sequence[dict[str, Any]], release: Release | None = None) -> CrdGate | None:
    """The gate for one environment, or None when its CRDs match the golden lock (or it has none yet: a first
    install installs the CRDs)."""
    if golden_lock is None:
        return None
    old = parse_lock(golden_lock, f"golden/{environment}/{layout.CRD_LOCK_FILE}")
    new = parse_lock(layout.crd_lock(chart), "render")
    if old.digests == new.digests:
        return None
    notes: list[str] = []
    old_documents = _old_crds(project_root, old, notes)
    unavailable = unavailable_words(old.chart, old.version) if old_documents is None else ""
    new_documents = [c.document for c in chart.crds]
    changes: list[crddiff.CrdChange] = []
    rendered_under_old: list[SchemaFinding] = []
    golden_under_new = _findings(SchemaSet.from_crds(new_documents), golden_documents)
    if old_documents is not None:
        changes = crddiff.compare_crds(old_documents, new_documents)
        rendered_under_old = _findings(SchemaSet.from_crds(old_documents), rendered_documents,
                                       pruned_by_old_crds(old.chart, old.version))
    statuses = crd_statuses(old, new)
    removed = [c for c in statuses if c.status == "removed"]
    required = bool(blocking_reasons(changes, removed, golden_under_new, notes, rendered_under_old))
    expected = expected_approval(environment, new.chart, old.version, new.version, new.digests,
                                 [c.name for c in removed])
    return CrdGate(environment, new.chart, old.version, new.version, statuses,
                   tuple(crddiff.sorted_changes(changes)), tuple(notes), tuple(golden_under_new),
                   tuple(rendered_under_old), _crd_application(rendered_documents),
                   check_approval(project_root, expected, required), unavailable, release)


def gate_statements(gate: CrdGate) -> list[str]:
    """The plain words every format prints, in this order (markdown adds emphasis, never other words)."""
    env = gate.environment
    changed, added, removed = gate.named("changed"), gate.named("added"), gate.named("removed")
    parts = ([f"{len(changed)} changed"] + [f"{len(added)} new"] * bool(added)
             + [f"{len(removed)} removed"] * bool(removed))
    lines = [f"CRD upgrade: {env} moves {gate.chart} {gate.old_version} -> {gate.new_version} and its CRDs change "
             f"({', '.join(parts)})."]
    if changed:
        lines.append("`helm upgrade` installs a chart's crds/ only on first install: it will NOT upgrade the changed "
                     "CRDs (" + ", ".join(c.name for c in changed) + ").")
    if added:
        lines.append(f"`helm upgrade` will NOT install the CRDs new in {gate.new_version}: "
                     + ", ".join(f"{c.name} ({c.kind})" for c in added)
                     + "; objects of those kinds are rejected until the CRDs are applied.")
    if removed:
        lines.append("Helm never deletes a CRD: " + ", ".join(c.name for c in removed) + " stay in the cluster. "
                     "Deleting a CRD deletes every object of its kind: delete one only when none is needed.")
    else:
        lines.append("Helm never deletes a CRD; deleting a CRD by hand deletes every object of its kind.")
    argocd = (f"or let the Argo CD application {gate.crd_application} (syncOptions ServerSideApply=true) sync "
              "before the operator" if gate.crd_application else
              "or sync them first with an Argo CD application that has syncOptions ServerSideApply=true")
    lines.extend(downgrade_statements(gate.chart, gate.old_version, gate.new_version))
    lines.append(f"Instead, apply the new CRDs BEFORE the chart upgrade: `krc render {env}` then "
                 f"`kubectl apply --server-side --force-conflicts -f rendered/{env}/crds/` ({argocd}). Server-side "
                 "apply is needed: the KubeRay CRDs exceed the client-side annotation size limit.")
    if gate.release is not None:
        commands = upgrade_commands(env, gate.chart, gate.new_version, gate.release)
        lines.append("With plain Helm, in this order: " + "; then ".join(f"`{c}`" for c in commands) + ".")
    return lines
