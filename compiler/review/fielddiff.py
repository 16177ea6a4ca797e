"""The semantic field diff of two versions of one object: changed fields as paths, old -> new.

Lists of named things are matched by their name (`workerGroupSpecs` by `groupName`; containers, env, ports,
volumes by `name`; volumeMounts by `mountPath`), so inserting one worker group shows that group only. Multi-line
strings (serveConfigV2, runtimeEnvYAML, embedded scripts) are shown as a unified diff of their lines.

Paths read like `spec.workerGroupSpecs[groupName=gpu].template.spec.containers[name=ray-worker].image`;
map keys that are not plain words are quoted: `metadata.annotations["krc.dev/source"]`.
"""
from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

Op = Literal["changed", "added", "removed", "text", "reordered"]

# Per list field, the item keys that name an item, tried in order; every other list tries NAME_KEYS.
LIST_KEYS: dict[str, tuple[str, ...]] = {
    "workerGroupSpecs": ("groupName",),
    "volumeMounts": ("mountPath",),
    "volumeDevices": ("devicePath",),
    "ports": ("name", "containerPort", "port"),
}
NAME_KEYS = ("groupName", "name")
CONTEXT_LINES = 3
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")  # the whole key (fullmatch; `$` also matches before "\n")


@dataclass(frozen=True)
class FieldChange:
    """One difference inside an object. `diff` holds unified-diff lines when op is "text"."""

    path: str
    op: Op
    old: Any = None
    new: Any = None
    diff: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        if self.op == "text":
            return {"path": self.path, "op": self.op, "diff": list(self.diff)}
        out: dict[str, Any] = {"path": self.path, "op": self.op}
        if self.op != "added":
            out["old"] = self.old
        if self.op != "removed":
            out["new"] = self.new
        return out


def key_path(path: str, key: Any) -> str:
    text = str(key)
    if _PLAIN_KEY.fullmatch(text):
        return f"{path}.{text}" if path else text
    # quoted as JSON: a key holding a newline or other control character stays on the review's one line
    return f"{path}[{json.dumps(text, ensure_ascii=False)}]"


def text_diff(old: str, new: str) -> tuple[str, ...]:
    """Unified-diff hunks of two texts, without the file header lines."""
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=CONTEXT_LINES)
    return tuple(line for i, line in enumerate(lines) if i >= 2)


def _naming_key(field: str, old: list[Any], new: list[Any]) -> str | None:
    """The item key that names every item of both lists uniquely, if any."""
    for key in LIST_KEYS.get(field, NAME_KEYS):
        usable = True
        for items in (old, new):
            names = [item.get(key) if isinstance(item, dict) else None for item in items]
            if any(n is None or isinstance(n, (dict, list)) for n in names) or len(set(map(str, names))) != len(names):
                usable = False
                break
        if usable:
            return key
    return None


def _same_scalar(old: Any, new: Any) -> bool:
    # type matters: YAML `1`, `1.0`, `true` and `"1"` are different values to the API server
    return type(old) is type(new) and old == new


def _diff_lists(old: list[Any], new: list[Any], path: str, field: str) -> Iterator[FieldChange]:
    key = _naming_key(field, old, new) if (old or new) else None
    if key is not None:
        before = {str(item[key]): item for item in old}
        after = {str(item[key]): item for item in new}
        for name in after:
            if name not in before:
                yield FieldChange(f"{path}[{key}={name}]", "added", None, after[name])
        for name in before:
            if name not in after:
                yield FieldChange(f"{path}[{key}={name}]", "removed", before[name], None)
        for name in before:
            if name in after:
                yield from diff_values(before[name], after[name], f"{path}[{key}={name}]", "")
        kept_before = [n for n in before if n in after]
        kept_after = [n for n in after if n in before]
        if kept_before != kept_after:
            yield FieldChange(path, "reordered", kept_before, kept_after)
        return
    if all(not isinstance(v, (dict, list)) for v in (*old, *new)):
        if len(old) != len(new) or not all(_same_scalar(a, b) for a, b in zip(old, new, strict=True)):
            yield FieldChange(path, "changed", old, new)
        return
    for index in range(max(len(old), len(new))):
        item_path = f"{path}[{index}]"
        if index >= len(old):
            yield FieldChange(item_path, "added", None, new[index])
        elif index >= len(new):
            yield FieldChange(item_path, "removed", old[index], None)
        else:
            yield from diff_values(old[index], new[index], item_path, "")


def diff_values(old: Any, new: Any, path: str = "", field: str = "") -> Iterator[FieldChange]:
    """Every difference between `old` and `new`, in document order (map keys sorted)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys(), key=str):
            child = key_path(path, key)
            if key not in old:
                yield FieldChange(child, "added", None, new[key])
            elif key not in new:
                yield FieldChange(child, "removed", old[key], None)
            else:
                yield from diff_values(old[key], new[key], child, str(key))
    elif isinstance(old, list) and isinstance(new, list):
        yield from _diff_lists(old, new, path, field)
    elif isinstance(old, str) and isinstance(new, str) and ("\n" in old or "\n" in new):
        if old != new:
            yield FieldChange(path, "text", old, new, text_diff(old, new))
    elif not _same_scalar(old, new):
        yield FieldChange(path, "changed", old, new)


def diff_documents(old: dict[str, Any], new: dict[str, Any]) -> tuple[FieldChange, ...]:
    return tuple(diff_values(old, new))
