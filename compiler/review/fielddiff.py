"""The semantic field diff of two versions of one object: changed fields, old -> new, where each is.

Where a change is stays structured (`FieldChange.where`: map keys, list positions, named items) until a formatter
prints it. Lists of named things are matched by their name (`workerGroupSpecs` by `groupName`; containers, env,
ports, volumes by `name`; volumeMounts by `mountPath`), so inserting one worker group shows that group only. An
RBAC rule is matched by what it grants (its API groups and resources), so reordered or regrouped rules do not
show as every rule changed. Other lists are compared element by element, aligned on the elements both keep: an
argument inserted into `args` is that argument added, not the whole list changed. Multi-line strings
(serveConfigV2, runtimeEnvYAML, embedded scripts) are shown as a unified diff of their lines.

Printed, paths read like `spec.workerGroupSpecs[groupName=gpu].template.spec.containers[name=ray-worker].image`;
map keys that are not plain words are quoted: `metadata.annotations["krc.dev/source"]`.
"""
from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..diagnostics.fieldpath import NAME_KEYS

Op = Literal["changed", "added", "removed", "text", "reordered"]

# Per list field, the item keys that name an item, tried in order; every other list tries fieldpath.NAME_KEYS
# (the one precedence the environment file, provenance and policy messages name list items by).
LIST_KEYS: dict[str, tuple[str, ...]] = {
    "workerGroupSpecs": ("groupName",),
    "volumeMounts": ("mountPath",),
    "volumeDevices": ("devicePath",),
    "ports": ("name", "containerPort", "port"),
}
CONTEXT_LINES = 3
GRANT = "grant"  # Match.key of an RBAC rule named by what it grants
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")  # the whole key (fullmatch; `$` also matches before "\n")


@dataclass(frozen=True)
class Match:
    """A list item named by its content: `key` is the item's naming field (`groupName`), or GRANT for an RBAC
    rule, whose `value` is what it grants (`ray.io: rayclusters,rayjobs`)."""

    key: str
    value: str


Step = str | int | Match  # a map key, a list position, a named list item


def step_text(step: Step) -> str:
    if isinstance(step, Match):
        return f"[{step.value}]" if step.key == GRANT else f"[{step.key}={step.value}]"
    if isinstance(step, int):
        return f"[{step}]"
    if _PLAIN_KEY.fullmatch(step):
        return f".{step}"
    # quoted as JSON: a key holding a newline or other control character stays on the review's one line
    return f"[{json.dumps(step, ensure_ascii=False)}]"


def path_text(where: Sequence[Step]) -> str:
    """`spec.workerGroupSpecs[groupName=gpu].replicas`: the path as reports print it."""
    return "".join(step_text(step) for step in where).removeprefix(".")


@dataclass(frozen=True)
class FieldChange:
    """One difference inside an object. `diff` holds unified-diff lines when op is "text"."""

    where: tuple[Step, ...]
    op: Op
    old: Any = None
    new: Any = None
    diff: tuple[str, ...] = ()

    @property
    def path(self) -> str:
        return path_text(self.where)

    def as_dict(self) -> dict[str, Any]:
        where = [{"key": s.key, "value": s.value} if isinstance(s, Match) else s for s in self.where]
        if self.op == "text":
            return {"path": self.path, "where": where, "op": self.op, "diff": list(self.diff)}
        out: dict[str, Any] = {"path": self.path, "where": where, "op": self.op}
        if self.op != "added":
            out["old"] = self.old
        if self.op != "removed":
            out["new"] = self.new
        return out


def text_diff(old: str, new: str) -> tuple[str, ...]:
    """Unified-diff hunks of two texts, without the file header lines."""
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=CONTEXT_LINES)
    return tuple(line for i, line in enumerate(lines) if i >= 2)


def _names(items: list[Any], name: Callable[[Any], str | None]) -> list[str] | None:
    """Each item's name, when every item has one and no two share it."""
    names = [name(item) for item in items]
    if any(n is None for n in names) or len(set(names)) != len(names):
        return None
    return [n for n in names if n is not None]


def _field_name(key: str) -> Callable[[Any], str | None]:
    def name(item: Any) -> str | None:
        value = item.get(key) if isinstance(item, dict) else None
        return None if value is None or isinstance(value, (dict, list)) else str(value)
    return name


def _grant(rule: Any) -> str | None:
    """What an RBAC rule grants, as its name: `ray.io: rayclusters,rayjobs` (core group: `core`)."""
    if not isinstance(rule, dict) or not isinstance(rule.get("verbs"), list):
        return None
    if isinstance(rule.get("nonResourceURLs"), list):
        return "urls: " + ",".join(map(str, rule["nonResourceURLs"]))
    groups_given = rule.get("apiGroups", [""])
    if not isinstance(rule.get("resources"), list) or not isinstance(groups_given, list):
        return None
    groups = ",".join(str(g) or "core" for g in groups_given or [""])
    named = rule.get("resourceNames")
    names = f" ({','.join(map(str, named))})" if isinstance(named, list) and named else ""
    return f"{groups}: {','.join(map(str, rule['resources']))}{names}"


def _naming(field: str, old: list[Any], new: list[Any]) -> tuple[str, list[str], list[str]] | None:
    """The key that names every item of both lists uniquely, with the names, if any."""
    keys: list[tuple[str, Callable[[Any], str | None]]] = [(k, _field_name(k)) for k in LIST_KEYS.get(field, NAME_KEYS)]
    if field == "rules":
        keys.insert(0, (GRANT, _grant))
    for key, name in keys:
        before, after = _names(old, name), _names(new, name)
        if before is not None and after is not None:
            return key, before, after
    return None


def _same_scalar(old: Any, new: Any) -> bool:
    # type matters: YAML `1`, `1.0`, `true` and `"1"` are different values to the API server
    return type(old) is type(new) and old == new


def _identity(value: Any) -> str:
    # the type is part of the identity (see _same_scalar); JSON keeps 1, 1.0, true and "1" apart
    return json.dumps(value, sort_keys=True, default=str)


def _diff_named(old: list[Any], new: list[Any], where: tuple[Step, ...], key: str, names_before: list[str],
                names_after: list[str]) -> Iterator[FieldChange]:
    before, after = dict(zip(names_before, old, strict=True)), dict(zip(names_after, new, strict=True))
    for name in after:
        if name not in before:
            yield FieldChange((*where, Match(key, name)), "added", None, after[name])
    for name in before:
        if name not in after:
            yield FieldChange((*where, Match(key, name)), "removed", before[name], None)
    for name in before:
        if name in after:
            yield from diff_values(before[name], after[name], (*where, Match(key, name)), "")
    kept_before = [n for n in before if n in after]
    kept_after = [n for n in after if n in before]
    if kept_before != kept_after:
        yield FieldChange(where, "reordered", kept_before, kept_after)


def _diff_elements(old: list[Any], new: list[Any], where: tuple[Step, ...]) -> Iterator[FieldChange]:
    """Element by element, aligned on the elements both lists keep; positions are the new list's, a removed
    element's the old list's."""
    matcher = difflib.SequenceMatcher(None, [_identity(v) for v in old], [_identity(v) for v in new], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for offset in range(paired):
            yield from diff_values(old[i1 + offset], new[j1 + offset], (*where, j1 + offset), "")
        for index in range(i1 + paired, i2):
            yield FieldChange((*where, index), "removed", old[index], None)
        for index in range(j1 + paired, j2):
            yield FieldChange((*where, index), "added", None, new[index])


def _diff_lists(old: list[Any], new: list[Any], where: tuple[Step, ...], field: str) -> Iterator[FieldChange]:
    naming = _naming(field, old, new) if (old or new) else None
    if naming is not None:
        yield from _diff_named(old, new, where, *naming)
    else:
        yield from _diff_elements(old, new, where)


def diff_values(old: Any, new: Any, where: tuple[Step, ...] = (), field: str = "") -> Iterator[FieldChange]:
    """Every difference between `old` and `new`, in document order (map keys sorted)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys(), key=str):
            child = (*where, str(key))
            if key not in old:
                yield FieldChange(child, "added", None, new[key])
            elif key not in new:
                yield FieldChange(child, "removed", old[key], None)
            else:
                yield from diff_values(old[key], new[key], child, str(key))
    elif isinstance(old, list) and isinstance(new, list):
        yield from _diff_lists(old, new, where, field)
    elif isinstance(old, str) and isinstance(new, str) and ("\n" in old or "\n" in new):
        if old != new:
            yield FieldChange(where, "text", old, new, text_diff(old, new))
    elif not _same_scalar(old, new):
        yield FieldChange(where, "changed", old, new)


def diff_documents(old: dict[str, Any], new: dict[str, Any]) -> tuple[FieldChange, ...]:
    return tuple(diff_values(old, new))
