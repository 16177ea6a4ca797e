"""Build the review: one environment's render against its golden files, object by object.

The golden side is read from its files; the render side is its objects with the bytes `krc golden` would write
for each, so what is reviewed is what would be committed; identical bytes short-cut the field diff.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from .. import output, yamlio
from ..k8s.objects import ObjectKey, key_of
from ..k8s.secrets import redact, redact_at, redact_lines
from ..problems import KrcError
from ..project import Project
from ..render import Render
from .capacity import environment_capacity, upgrade_peak
from .consequences import REPLACES_CLUSTER, object_labels, values_labels
from .crdgate import crd_gate
from .fielddiff import diff_documents, text_diff
from .golden_source import GitGolden, WorkingTreeGolden, git_golden
from .helm_commands import Release
from .model import EnvironmentReview, FileChange, ObjectChange

Parsed = dict[ObjectKey, tuple[str, bytes, dict[str, Any]]]  # key -> (file, bytes, document)


def _objects(files: output.Files, shown: str) -> Parsed:
    parsed: Parsed = {}
    for path, content in files.items():
        if not path.startswith(tuple(f"{d}/" for d in output.OBJECT_DIRS)):
            continue
        source = f"{shown}/{path}"
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            raise KrcError(f"{source} is not UTF-8 text; restore it from git or run 'krc golden'") from None
        document = yamlio.load(text, source)
        if not isinstance(document, dict) or not document.get("kind"):
            raise KrcError(f"{source} is not a Kubernetes object; restore it from git or run 'krc golden'")
        key = key_of(document)
        if key in parsed:
            raise KrcError(f"{source} and {shown}/{parsed[key][0]} hold the same object {key.ref}; "
                           "delete one, or run 'krc golden'")
        parsed[key] = (path, content, document)
    return parsed


def _rendered_objects(render: Render, files: output.Files) -> Parsed:
    """The render's own objects, with the file and bytes `krc golden` would write for each (no parse back: the
    canonical dump reads back as the same data, which tests/properties checks)."""
    parsed: Parsed = {}
    for folder, objects in ((output.MANIFESTS_DIR, render.objects), (output.CHART_DIR, render.chart_objects)):
        documents = [o.document for o in objects]
        parsed.update({key_of(document): (name, files[name], document)
                       for name, document in zip(output.manifest_names(documents, folder), documents, strict=True)})
    return parsed


def _object_change(key: ObjectKey, old: tuple[Any, ...] | None, new: tuple[Any, ...] | None) -> ObjectChange | None:
    if old is None:
        file, _, document = new  # type: ignore[misc]
        return ObjectChange(key, "added", "", document["apiVersion"], file, (), (), document)
    if new is None:
        file, _, document = old
        return ObjectChange(key, "removed", document["apiVersion"], "", file, (),
                            object_labels(key.group, key.kind, "removed", document, None, ()), document)
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


def _file_changes(golden: output.Files, current: output.Files, skip: set[str]) -> list[FileChange]:
    changes = []
    for path in sorted((golden.keys() | current.keys()) - skip):
        if path.startswith(tuple(f"{d}/" for d in output.OBJECT_DIRS)):
            continue
        before, after = golden.get(path), current.get(path)
        if before == after:
            continue
        status = "added" if before is None else "removed" if after is None else "changed"
        diff = text_diff((before or b"").decode("utf-8", "replace"), (after or b"").decode("utf-8", "replace"))
        labels = values_labels(True) if path == output.VALUES_FILE else ()
        changes.append(FileChange(path, status, redact_lines(diff), labels))  # type: ignore[arg-type]
    return changes


def review_environment(project: Project, render: Render, golden: output.Files) -> EnvironmentReview:
    name = render.environment.name
    current = output.render_files(render, include_crds=False)
    before, after = _objects(golden, f"golden/{name}"), _rendered_objects(render, current)
    objects = [change for key in sorted(before.keys() | after.keys())
               if (change := _object_change(key, before.get(key), after.get(key))) is not None]
    new_documents = [entry[2] for entry in after.values()]
    operator = render.environment.data.get("operator") or {}
    release = Release(render.chart.name, str(operator.get("namespace") or "default"),
                      str((operator.get("chart") or {}).get("repository") or ""))
    gate = crd_gate(project.root, name, golden.get(output.CRD_LOCK_FILE), [e[2] for e in before.values()],
                    render.chart, new_documents, release)
    files = _file_changes(golden, current, {output.CRD_LOCK_FILE} if gate else set())
    capacity_after = environment_capacity(new_documents)
    # only a RayService whose cluster KubeRay replaces runs two clusters at once
    replaced = [after[o.key][2] for o in objects if any(label.code == REPLACES_CLUSTER for label in o.labels)]
    return EnvironmentReview(name, not golden, tuple(redacted(o) for o in objects), tuple(files), len(after) - sum(
        o.status != "removed" for o in objects), environment_capacity(e[2] for e in before.values()),
        capacity_after, upgrade_peak(capacity_after, replaced), gate)


def golden_source(project: Project, base: str | None) -> WorkingTreeGolden | GitGolden:
    return git_golden(project.root, base) if base else WorkingTreeGolden(project.golden_dir)
