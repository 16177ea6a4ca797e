"""Organisation policies: every policy file unified with every environment by CUE inside krc's engine (the
`policy` op, engine/policy.go), its errors as findings.

A finding names the rule `policy/<file stem>`, the value (env... or objects...), CUE's message, the policy line
that constrains it, and is placed at the environment line that set the value when the provenance knows it.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import jsontext
from ..diagnostics.fieldpath import item_name
from ..diagnostics.problems import KrcError, Location, Problem, sorted_problems
from ..native import client
from ..project.paths import decode_text, policy_files, read_confined
from ..settings import limits
from .engine import CueEngine, find_engine

InputPath = tuple[Any, ...]  # starts with "env" or "objects"; list items by index

# How long one engine request (a batch of environments under every policy) may take before the engine is stopped:
# a runaway comprehension must end in an error, not a hung CI job or Argo CD sync
POLICY_SECONDS = limits.Limit("KRC_POLICY_SECONDS", 300, "policy evaluation time (seconds)")


def _nowhere(path: InputPath) -> Location | None:
    return None


@dataclass(frozen=True)
class PolicyInput:
    """One environment as policies see it: `env` (the resolved environment) and `objects` (rendered manifests)."""

    name: str
    environment: dict[str, Any]
    objects: tuple[dict[str, Any], ...]
    # where the value at an input path was set, e.g. ("env", "clusters", 0, "head", "gpu") -> environments/x.yaml:12
    locate: Callable[[InputPath], Location | None] = field(default=_nowhere, compare=False)


def _shown_from_cwd(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def evaluate_policies(policy_dir: Path, inputs: Sequence[PolicyInput], *, engine: CueEngine | None = None,
                      show_path: Callable[[Path], str] = _shown_from_cwd) -> list[Problem]:
    """Findings of every policy in `policy_dir` on every input, sorted; KrcError when a policy is broken
    (syntax, unknown reference) or there is no engine."""
    return sorted_problems(p for found in evaluate_each(policy_dir, inputs, engine=engine, show_path=show_path)
                           for p in found)


def evaluate_each(policy_dir: Path, inputs: Sequence[PolicyInput], *, engine: CueEngine | None = None,
                  show_path: Callable[[Path], str] = _shown_from_cwd) -> list[list[Problem]]:
    """Per input, in order, the sorted findings of every policy on it, from one engine request. Each environment
    is unified with each policy on its own, so its findings do not depend on which other inputs share it."""
    with PolicyRun(policy_dir, inputs, engine=engine, show_path=show_path) as run:
        return run.results()


@dataclass(frozen=True)
class Policy:
    name: str  # the file stem; findings carry the rule id policy/<name>
    shown: str  # how messages name the file (positions carry this name)
    text: str


_PACKAGE = re.compile(r"^package\s+[A-Za-z_][A-Za-z0-9_]*\s*(//.*)?$")


def read_policy(path: Path, shown: str) -> Policy:
    """The policy file's text; KrcError when it is too big, not UTF-8, or lacks its package clause."""
    text = decode_text(read_confined(path, path.parent, limits.TEMPLATE_FILE_BYTES, shown), shown)
    first = next((line.strip() for line in text.split("\n") if line.strip() and not line.strip().startswith("//")),
                 "")
    if not _PACKAGE.match(first):
        raise KrcError("a policy file starts with a package clause, e.g. 'package policy' (after comments); "
                       "add it as the first statement", Location(shown, 1, 1))
    return Policy(path.stem, shown, text)


def _cue_json(value: Any, what: str) -> Any:
    """`value` as the engine takes it (JSON); KrcError for what JSON cannot hold (NaN, infinities)."""
    try:
        jsontext.finite(value)
    except (TypeError, ValueError) as err:
        raise KrcError(f"{what} cannot be given to CUE: {err}") from None
    return value


class PolicyRun:
    """evaluate_each in two steps: `start` asks the engine, something else is done meanwhile (Ray's generator, a
    review), then `results` waits for the answer (asking first if nothing did). Closing drops the answer."""

    def __init__(self, policy_dir: Path, inputs: Sequence[PolicyInput], *, engine: CueEngine | None = None,
                 show_path: Callable[[Path], str] = _shown_from_cwd) -> None:
        self._policy_dir, self._inputs, self._engine, self._show_path = policy_dir, list(inputs), engine, show_path
        self._started = False
        self._policies: list[Policy] = []
        self._pending: client.Pending | None = None

    def start(self) -> None:
        """Send the request; KrcError for a policy krc cannot read, an input CUE cannot take, or no engine."""
        if self._started:
            return
        self._started = True
        self._policies = [read_policy(path, self._show_path(path)) for path in policy_files(self._policy_dir)]
        if not self._policies or not self._inputs:
            return
        if self._engine is None:
            find_engine()  # no engine: say how to build it
        args = {"policies": [{"name": p.name, "file": p.shown, "source": p.text} for p in self._policies],
                "inputs": [{"name": i.name, "env": _cue_json(i.environment, f"environment {i.name}"),
                            "objects": _cue_json(list(i.objects), f"the rendered objects of environment {i.name}")}
                           for i in self._inputs]}
        self._pending = client.Pending("policy", args, self._what(), POLICY_SECONDS.value)

    def _what(self) -> str:
        names = [i.name for i in self._inputs]
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        files = ", ".join(p.shown for p in self._policies)
        return f"the policies {files} on environment{'s' if len(names) > 1 else ''} {shown}"

    def results(self) -> list[list[Problem]]:
        """Per input, its sorted findings; KrcError when a policy is broken (syntax, unknown reference)."""
        self.start()
        pending, self._pending = self._pending, None
        if pending is None:
            return [[] for _ in self._inputs]
        answer = pending.result()
        if answer["broken"]:
            raise KrcError(sorted_problems(dict.fromkeys(_broken_policy(e) for e in answer["broken"])))
        by_name = {p.name: p for p in self._policies}
        out = []
        for item, errors in zip(self._inputs, answer["findings"], strict=True):
            found: dict[tuple[Any, ...], Problem] = {}
            for error in errors:
                problem = _finding(error, by_name[error["policy"]], item)
                found.setdefault((problem.sort_key(), problem.path), problem)
            out.append(sorted_problems(found.values()))
        return out

    def close(self) -> None:
        self._pending = None  # the engine answers a request no one waits for, and the answer is dropped

    def __enter__(self) -> PolicyRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _places(error: dict[str, Any]) -> list[Location]:
    return [Location(p["file"], p["line"], p["column"]) for p in error["positions"]]


def _broken_policy(error: dict[str, Any]) -> Problem:
    places = _places(error)
    return Problem(f"CUE cannot evaluate this policy: {error['message']}; fix the policy",
                   places[0] if places else None)


def _finding(error: dict[str, Any], policy: Policy, item: PolicyInput) -> Problem:
    message, value_path, places = error["message"], tuple(error["path"]), _places(error)
    origin = item.locate(value_path) if value_path[:1] in (("env",), ("objects",)) else None
    if message == "field not allowed" and value_path[:1] in (("env",), ("objects",)):
        # the inputs are closed, so a field the policy requires but the environment lacks is "not allowed"
        message = f"missing: the policy requires it (CUE: {message})"
    where = f"; policy {places[0]}" + "".join(f", {p.line}:{p.column}" for p in places[1:]) if places else ""
    text = f"environment {item.name}: {readable_path(value_path, item)}: {message}{where}"
    if origin is not None and places:
        # an object's field points at the environment key that produced it, or at its nearest parent
        text += f"; value set at {origin}" if value_path[:1] == ("env",) else f"; produced by {origin}"
    return Problem(text, origin or (places[0] if places else None), "error", f"policy/{policy.name}",
                   _object_ref(item, value_path), value_path)


def readable_path(path: InputPath, item: PolicyInput) -> str:
    """env.clusters[gpu].workerGroups[big].gpu: list items by their name when they have one."""
    root: Any = {"env": item.environment, "objects": list(item.objects)}
    out, value = "", root
    for step in path:
        if isinstance(step, int):
            element = value[step] if isinstance(value, list) and 0 <= step < len(value) else None
            label: Any = item_name(element) or step
            if isinstance(element, dict) and element.get("kind") and isinstance(element.get("metadata"), dict):
                label = f"{element['kind']}/{element['metadata'].get('name', step)}"
            out += f"[{label}]"
            value = element
        else:
            out += f".{step}" if out else str(step)
            value = value.get(step) if isinstance(value, dict) else None
    return out or "(top)"


def _object_ref(item: PolicyInput, path: InputPath) -> str:
    if len(path) < 2 or path[0] != "objects" or not isinstance(path[1], int) or path[1] >= len(item.objects):
        return ""
    doc = item.objects[path[1]]
    meta = doc.get("metadata") or {}
    return "/".join(str(p) for p in (doc.get("kind"), meta.get("namespace"), meta.get("name")) if p)


def findings_by_environment(policy_dir: Path, inputs: Sequence[PolicyInput], *, engine: CueEngine | None = None,
                            show_path: Callable[[Path], str] = _shown_from_cwd) -> dict[str, list[Problem]]:
    """evaluate_each, by input name (every input has an entry), in one engine run."""
    found = evaluate_each(policy_dir, inputs, engine=engine, show_path=show_path)
    return {item.name: problems for item, problems in zip(inputs, found, strict=True)}
