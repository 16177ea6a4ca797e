"""Build the review: one environment's render against its golden files, object by object.

The golden side is read from its files; the render side is its objects with the bytes `krc golden` would write
for each, so what is reviewed is what would be committed; identical bytes short-cut the field diff.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ..diagnostics.problems import SEVERITY_ORDER, KrcError, Location, Problem
from ..documents import yamlio
from ..k8s.objects import ObjectKey, key_of
from ..k8s.secrets import redact, redact_at, redact_lines
from ..output import folders, layout
from ..policy.limits import CapacityLimit
from ..project.paths import Project
from ..render.templates import Render
from .capacity import Capacity, environment_capacity, upgrade_peak
from .consequences import REPLACES_CLUSTER, object_labels, values_labels
from .crdgate import CrdGate, crd_gate
from .fielddiff import diff_documents, text_diff
from .grouping import group_changes
from .helm_commands import Release
from .model import EnvironmentReview, FileChange, LimitCheck, ObjectChange, check_identity
from .pictures import accelerator_change, sync_order
from .summaries import object_summary

Parsed = dict[ObjectKey, tuple[str, bytes, dict[str, Any]]]  # key -> (file, bytes, document)


def _objects(files: folders.Files, shown: str, known: dict[bytes, dict[str, Any]] | None = None) -> Parsed:
    """Every manifest parsed; `known` maps file bytes to their document already parsed (same bytes, same data)."""
    parsed: Parsed = {}
    for path, content in files.items():
        if not path.startswith(tuple(f"{d}/" for d in layout.OBJECT_DIRS)):
            continue
        source = f"{shown}/{path}"
        if known and content in known:
            document = known[content]
        else:
            try:
                text = content.decode("utf-8")
            except UnicodeDecodeError:
                raise KrcError(f"{source} is not UTF-8 text; restore it from git or run 'krc golden'") from None
            document = yamlio.load(text, source)
        if not _is_object(document):
            raise KrcError(f"{source} is not a Kubernetes object (apiVersion, kind and metadata.name as text); "
                           "restore it from git or run 'krc golden'", Location(source, 1, 1))
        key = key_of(document)
        if key in parsed:
            raise KrcError(f"{source} and {shown}/{parsed[key][0]} hold the same object {key.ref}; "
                           "delete one, or run 'krc golden'")
        parsed[key] = (path, content, document)
    return parsed


def _is_object(document: Any) -> bool:
    """The shape every golden manifest has, which the review reads without asking again (golden/ is edited by
    hand, and hostile: a missing apiVersion or a list for metadata must be bad input, not a crash)."""
    if not isinstance(document, dict):
        return False
    meta = document.get("metadata")
    return all(isinstance(document.get(field), str) and document[field] for field in ("apiVersion", "kind")) \
        and isinstance(meta, dict) and isinstance(meta.get("name"), str) \
        and isinstance(meta.get("namespace", ""), str)


def _rendered_objects(render: Render, files: folders.Files) -> Parsed:
    """The render's own objects, with the file and bytes `krc golden` would write for each (no parse back: the
    canonical dump reads back as the same data, which tests/properties checks)."""
    parsed: Parsed = {}
    for folder, objects in ((layout.MANIFESTS_DIR, render.objects), (layout.CHART_DIR, render.chart_objects)):
        documents = [o.document for o in objects]
        parsed.update({key_of(document): (name, files[name], document)
                       for name, document in zip(layout.manifest_names(documents, folder), documents, strict=True)})
    return parsed


def _object_change(key: ObjectKey, old: tuple[str, bytes, dict[str, Any]] | None,
                   new: tuple[str, bytes, dict[str, Any]] | None) -> ObjectChange | None:
    if old is None:
        file, _, document = new  # type: ignore[misc]
        return ObjectChange(key, "added", "", document["apiVersion"], file, (), (), document, object_summary(document))
    if new is None:
        file, _, document = old
        return ObjectChange(key, "removed", document["apiVersion"], "", file, (),
                            object_labels(key.group, key.kind, "removed", document, None, ()), document,
                            object_summary(document))
    if old[1] == new[1]:
        return None
    fields = diff_documents(old[2], new[2])
    if not fields:
        return None  # the same object written differently
    labels = object_labels(key.group, key.kind, "changed", old[2], new[2], fields)
    return ObjectChange(key, "changed", old[2]["apiVersion"], new[2]["apiVersion"], new[0], fields, labels, None)


def redacted(change: ObjectChange) -> ObjectChange:
    """The change as reports show it: credential values as `***` (the comparison itself saw the real values, so
    a changed secret still shows as a change)."""
    kind = change.key.kind
    fields = tuple(dataclasses.replace(f, old=redact_at(f.path, f.old, kind), new=redact_at(f.path, f.new, kind),
                                       diff=redact_lines(f.diff)) for f in change.fields)
    document = redact(change.document, kind) if change.document is not None else None
    return dataclasses.replace(change, fields=fields, document=document)


def _file_changes(golden: folders.Files, current: folders.Files, skip: set[str]) -> list[FileChange]:
    changes = []
    for path in sorted((golden.keys() | current.keys()) - skip):
        if path.startswith(tuple(f"{d}/" for d in layout.OBJECT_DIRS)):
            continue
        before, after = golden.get(path), current.get(path)
        if before == after:
            continue
        status = "added" if before is None else "removed" if after is None else "changed"
        diff = text_diff((before or b"").decode("utf-8", "replace"), (after or b"").decode("utf-8", "replace"))
        labels = values_labels(True) if path == layout.VALUES_FILE else ()
        changes.append(FileChange(path, status, redact_lines(diff), labels))  # type: ignore[arg-type]
    return changes


def _limit_checks(limits: Sequence[CapacityLimit], capacity: Capacity) -> tuple[LimitCheck, ...]:
    values = {"gpu": capacity.gpus}
    return tuple(LimitCheck(limit.policy, limit.resource, limit.maximum, values[limit.resource])
                 for limit in limits if limit.resource in values)


def _review(name: str, golden: folders.Files, current: folders.Files, after: Parsed, gate: CrdGate | None,
            removed: bool, checks: Sequence[Problem], limits: Sequence[CapacityLimit],
            before: Parsed | None = None) -> EnvironmentReview:
    before = _objects(golden, f"golden/{name}") if before is None else before
    objects = [change for key in sorted(before.keys() | after.keys())
               if (change := _object_change(key, before.get(key), after.get(key))) is not None]
    objects.sort(key=lambda o: o.rank)  # the worst consequences first; otherwise by group, kind, name
    objects = [redacted(o) for o in objects]  # reports show credentials as *** (compared with their real values)
    files = _file_changes(golden, current, {layout.CRD_LOCK_FILE} if gate else set())
    capacity_after = environment_capacity(entry[2] for entry in after.values())
    # only a RayService whose cluster KubeRay replaces runs two clusters at once
    replaced = [after[o.key][2] for o in objects if any(label.code == REPLACES_CLUSTER for label in o.labels)]
    return EnvironmentReview(
        name, not golden, tuple(objects), tuple(files), len(after) - sum(o.status != "removed" for o in objects),
        environment_capacity(e[2] for e in before.values()), capacity_after, upgrade_peak(capacity_after, replaced),
        gate, removed, group_changes((o.key.ref, o.fields) for o in objects),
        errors_first(checks), _limit_checks(limits, capacity_after),
        sync=sync_order(entry[2] for entry in after.values()),
        accelerators=accelerator_change((e[2] for e in before.values()), (e[2] for e in after.values())))


def errors_first(checks: Sequence[Problem]) -> tuple[Problem, ...]:
    return tuple(sorted(dict.fromkeys(checks), key=lambda p: (SEVERITY_ORDER[p.severity], p.sort_key())))


def with_checks(review: EnvironmentReview, checks: Sequence[Problem]) -> EnvironmentReview:
    """The review with the environment's lint and policy findings, errors first."""
    return dataclasses.replace(review, checks=errors_first(checks))


def with_check_changes(review: EnvironmentReview, current: Sequence[Problem], base: Sequence[Problem]
                       ) -> EnvironmentReview:
    """The review with the findings that are new against the base's and those of the base that are resolved,
    errors first."""
    before = {check_identity(p) for p in base}
    after = {check_identity(p) for p in current}
    return dataclasses.replace(review,
                               new_checks=errors_first([p for p in current if check_identity(p) not in before]),
                               resolved_checks=errors_first([p for p in base if check_identity(p) not in after]))


def review_environment(project: Project, render: Render, golden: folders.Files, checks: Sequence[Problem] = (),
                       limits: Sequence[CapacityLimit] = (), current: folders.Files | None = None) -> EnvironmentReview:
    """One environment's render against its golden files, with its checks (lint and policy findings) and the
    capacity limits its policies state; `current`: the render's files in golden layout, when the caller has them
    already (the compile cache)."""
    name = render.environment.name
    current = layout.render_files(render, include_crds=False) if current is None else current
    after = _rendered_objects(render, current)
    capacity = environment_capacity(entry[2] for entry in after.values())
    if golden == current:  # nothing changed: no field to compare, the same CRD lock (no gate), one capacity
        documents = [entry[2] for entry in after.values()]
        return EnvironmentReview(name, False, (), (), len(after), capacity, capacity, upgrade_peak(capacity, []),
                                 None, limits=_limit_checks(limits, capacity), sync=sync_order(documents),
                                 accelerators=accelerator_change(documents, documents))
    # golden files with the bytes of a rendered file hold its document: no need to parse them again
    before = _objects(golden, f"golden/{name}", {entry[1]: entry[2] for entry in after.values()})
    operator = render.environment.data.get("operator") or {}
    release = Release(render.chart.name, str(operator.get("namespace") or "default"),
                      str((operator.get("chart") or {}).get("repository") or ""))
    gate = crd_gate(project.root, name, golden.get(layout.CRD_LOCK_FILE), [e[2] for e in before.values()],
                    render.chart, [entry[2] for entry in after.values()], release)
    return _review(name, golden, current, after, gate, False, checks, limits, before)


def removed_environment(name: str, golden: folders.Files) -> EnvironmentReview:
    """An environment whose file is gone while golden/ still holds it: every object in it would be pruned."""
    return _review(name, golden, {}, {}, None, True, (), ())


def pruned_objects(name: str, golden: folders.Files, paths: Sequence[str]) -> list[str]:
    """`Kind ns/name: impact: consequence` for each golden manifest among `paths` (for `krc check`)."""
    lines = []
    for path in sorted(paths):
        try:  # a stray file that is no object is listed by `krc check` as gone; it has no consequence
            [(key, entry)] = _objects({path: golden[path]}, f"golden/{name}").items()
        except (KrcError, KeyError, ValueError):
            continue
        change = _object_change(key, entry, None)
        if change is not None:
            lines += [f"{key.ref}: {label.severity}: {label.message}" for label in change.labels]
    return lines

