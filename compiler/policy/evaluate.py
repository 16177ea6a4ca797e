"""Organisation policies: every policy file unified with every environment in one CUE run, errors as findings.

A finding names the rule `policy/<file stem>`, the value (env... or objects...), CUE's message, the policy line
that constrains it, and is placed at the environment line that set the value when the provenance knows it.
"""
from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..problems import KrcError, Location, Problem, sorted_problems
from . import workspace
from .cue_errors import CueError, CuePosition, parse_errors
from .engine import CueEngine, CueProcess, find_engine

InputPath = tuple[Any, ...]  # starts with "env" or "objects"; list items by index


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


def policy_files(policy_dir: Path) -> list[Path]:
    """policies/*.cue, except files starting with '_' or '.', which CUE itself never loads."""
    if not policy_dir.is_dir():
        return []
    return sorted(p for p in policy_dir.glob("*.cue") if not p.name.startswith(("_", ".")))


def _shown_from_cwd(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def evaluate_policies(policy_dir: Path, inputs: Sequence[PolicyInput], *, engine: CueEngine | None = None,
                      show_path: Callable[[Path], str] = _shown_from_cwd) -> list[Problem]:
    """Findings of every policy in `policy_dir` on every input, sorted; KrcError when a policy is broken
    (syntax, unknown reference) or no CUE engine is available."""
    return sorted_problems(p for found in evaluate_each(policy_dir, inputs, engine=engine, show_path=show_path)
                           for p in found)


def evaluate_each(policy_dir: Path, inputs: Sequence[PolicyInput], *, engine: CueEngine | None = None,
                  show_path: Callable[[Path], str] = _shown_from_cwd) -> list[list[Problem]]:
    """Per input, in order, the sorted findings of every policy on it, from one engine run. Each environment is
    unified with each policy on its own, so its findings do not depend on which other inputs share the run."""
    with PolicyRun(policy_dir, inputs, engine=engine, show_path=show_path) as run:
        return run.results()


class PolicyRun:
    """evaluate_each in two steps: `start` the engine, do something else meanwhile (Ray's generator, a review),
    then wait for its `results`, which start it if nothing did. Used as a context manager, it never leaves an
    engine running or its workspace behind."""

    def __init__(self, policy_dir: Path, inputs: Sequence[PolicyInput], *, engine: CueEngine | None = None,
                 show_path: Callable[[Path], str] = _shown_from_cwd) -> None:
        self._policy_dir, self._inputs, self._engine, self._show_path = policy_dir, list(inputs), engine, show_path
        self._started = False
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self._process: CueProcess | None = None
        self._written: workspace.Workspace | None = None

    def start(self) -> None:
        """Write the workspace and start the engine; KrcError (nothing left behind) for a policy krc cannot read,
        an input CUE cannot take, or no engine."""
        if self._started:
            return
        self._started = True
        policies = [workspace.read_policy(path, self._show_path(path)) for path in policy_files(self._policy_dir)]
        if not policies or not self._inputs:
            return
        engine = self._engine or find_engine([self._policy_dir.resolve().parent])
        self._folder = tempfile.TemporaryDirectory(prefix="krc-policy-")
        try:
            root = Path(self._folder.name)
            self._written = workspace.write_workspace(root, policies, [(i.name, i.environment, i.objects)
                                                                       for i in self._inputs])
            self._process = CueProcess(engine, self._written.vet_args, root)
        except BaseException:
            self.close()  # no workspace left behind by an input CUE cannot take or an engine that cannot start
            raise

    def results(self) -> list[list[Problem]]:
        """Per input, its sorted findings; KrcError when a policy is broken (syntax, unknown reference)."""
        try:
            self.start()
            if self._process is None or self._written is None:
                return [[] for _ in self._inputs]
            run, engine = self._process.wait(), self._process.engine
        finally:
            self.close()
        if run.exit_code == 0:
            return [[] for _ in self._inputs]
        errors = parse_errors(run.stderr or run.stdout)
        if not errors:
            raise KrcError(f"{engine.description} failed (exit {run.exit_code}) without an error report: "
                           f"{(run.stderr or run.stdout).strip()[:500] or 'no output'}")
        return _findings_each(errors, self._written, self._inputs)

    def close(self) -> None:
        if self._process is not None:
            self._process.stop()
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    def __enter__(self) -> PolicyRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_MISSING = re.compile(r"^field ?(\S*) not allowed$")
# a name the policy never declared or imported: the policy is broken, whatever the environment holds
_UNRESOLVED = re.compile(r'^reference "[^"]*" not found$')


def _policy_location(position: CuePosition, written: workspace.Workspace) -> Location | None:
    found = written.policy_position(position.file, position.line, position.column)
    return found[1] if found else None


def _findings_each(errors: list[CueError], written: workspace.Workspace,
                   inputs: Sequence[PolicyInput]) -> list[list[Problem]]:
    """Per input, its findings; KrcError when an error is about a policy itself."""
    broken: list[Problem] = []
    found: list[dict[tuple[Any, ...], Problem]] = [{} for _ in inputs]
    for error in errors:
        policies = written.policies
        places = list(dict.fromkeys(loc for p in error.positions if (loc := _policy_location(p, written))))
        target = None if _UNRESOLVED.match(error.message) else _target(error.path, len(policies), len(inputs))
        if target is None:
            broken.append(_broken_policy(error, places))
            continue
        env_index, policy_index, value_path = target
        problem = _finding(error, policies[policy_index], inputs[env_index], value_path, places)
        found[env_index].setdefault((problem.sort_key(), problem.path), problem)
    if broken:
        raise KrcError(sorted_problems(dict.fromkeys(broken)))
    return [sorted_problems(each.values()) for each in found]


def _target(path: tuple[Any, ...], n_policies: int, n_inputs: int) -> tuple[int, int, InputPath] | None:
    """(RESULTS, 'e3', 'p1', 'env', ...) -> (3, 1, ('env', ...)); None when the error is not about a result."""
    if len(path) < 3 or path[0] != workspace.RESULTS:
        return None
    env, policy = str(path[1]), str(path[2])
    if not (env[1:].isdigit() and policy[1:].isdigit() and env[0] == "e" and policy[0] == "p"):
        return None
    if int(env[1:]) >= n_inputs or int(policy[1:]) >= n_policies:
        return None
    return int(env[1:]), int(policy[1:]), tuple(path[3:])


def _broken_policy(error: CueError, places: list[Location]) -> Problem:
    if places:
        message = error.message.removeprefix("import failed: ")  # the policy is imported by the generated check
        return Problem(f"CUE cannot evaluate this policy: {message}; fix the policy", places[0])
    return Problem(f"CUE failed on the generated policy input: {error.message}"
                   + (f" ({error.positions[0].file}:{error.positions[0].line})" if error.positions else ""))


def _finding(error: CueError, policy: workspace.Policy, item: PolicyInput, value_path: InputPath,
             places: list[Location]) -> Problem:
    message = error.message
    missing = _MISSING.match(message)
    shown_path = value_path
    origin = item.locate(value_path) if value_path[:1] in (("env",), ("objects",)) else None
    if missing and value_path[:1] in (("env",), ("objects",)):
        # the inputs are closed, so a field the policy requires but the environment lacks reads "not allowed"
        # (CUE v0.4 names the field in the message; later versions put it at the end of the path)
        shown_path = value_path + ((missing[1],) if missing[1] else ())
        message = f"missing: the policy requires it (CUE: {message})"
    where = f"; policy {places[0]}" + "".join(f", {p.line}:{p.column}" for p in places[1:]) if places else ""
    text = f"environment {item.name}: {readable_path(shown_path, item)}: {message}{where}"
    if origin is not None and places:
        # an object's field points at the environment key that produced it, or at its nearest parent
        text += f"; value set at {origin}" if value_path[:1] == ("env",) else f"; produced by {origin}"
    return Problem(text, origin or (places[0] if places else None), "error", f"policy/{policy.name}",
                   _object_ref(item, value_path), tuple(shown_path))


def readable_path(path: InputPath, item: PolicyInput) -> str:
    """env.clusters[gpu].workerGroups[big].gpu: list items by their name when they have one."""
    root: Any = {"env": item.environment, "objects": list(item.objects)}
    out, value = "", root
    for step in path:
        if isinstance(step, int):
            element = value[step] if isinstance(value, list) and 0 <= step < len(value) else None
            label = (element.get("name") or element.get("groupName") if isinstance(element, dict) else None) or step
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
