"""The CUE workspace for one engine run: every policy unified with every environment, in a temporary directory.

    inputs.cue       package check; #krcInput<j>: {env: <JSON>, objects: <JSON>} for each j  (JSON is valid CUE)
    policy_<i>.cue   policy i's package clause (renamed check) and imports, then for each environment j:
                         krcPolicyResults: e<j>: p<i>: {env: #krcInput<j>.env, objects: ...     (one line)
                         <the policy's declarations, line for line>
                         }

Why one package of files named on the command line, not a package per policy imported by a check file: CUE
v0.4 in WebAssembly spends about 0.35 s loading each imported package, so one environment under four policies
took 2.3 s, and takes 0.8 s this way. Why a copy of the declarations per environment: CUE reports an error once
per position, so environments unified with one shared copy would lose every finding but the first whose
positions are all in the policy (an undefined field, say). A policy keeps a file of its own, so its imports stay
its own, and `Workspace.policy_position` takes a position back to the user's line. The inputs are definitions,
hence closed: a policy that requires a field the environment lacks gets a real error ("field x not allowed")
instead of an incomplete value CUE would only report on its own. The names krc adds start with krc, so a policy
cannot mean them by accident.
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import limits
from ..problems import KrcError, Location
from ..project import decode_text, read_confined

PACKAGE = "check"
RESULTS = "krcPolicyResults"
INPUT_FILE = "inputs.cue"

_PACKAGE = re.compile(r"^package\s+([A-Za-z_][A-Za-z0-9_]*)\s*$")
_IMPORT_GROUP = re.compile(r"^import\s*\(")
_IMPORT_ONE = re.compile(r'^import\s+(?:[A-Za-z_$][A-Za-z0-9_$]*\s+)?"[^"]*"$')
_POLICY_FILE = re.compile(r"(?:^|/)policy_(\d+)\.cue$")


@dataclass(frozen=True)
class Policy:
    name: str  # the file stem; findings carry the rule id policy/<name>
    path: Path
    shown: str  # how messages name the file
    package: str
    text: str


@dataclass(frozen=True)
class WrappedPolicy:
    """A policy as the workspace holds it: lines 1 to `preamble` are the user's (the package clause renamed),
    then one copy per environment of `stride` lines: krc's opening line, the user's lines after the preamble,
    krc's closing brace."""

    text: str
    preamble: int
    lines: int  # how many lines the user's file has, counting a last one without a newline

    @property
    def stride(self) -> int:
        return self.lines - self.preamble + 2

    def user_position(self, line: int, column: int) -> tuple[int, int] | None:
        """The user's line and column shown at this workspace position; None on krc's opening line."""
        if line <= self.preamble:
            return line, column
        offset = (line - self.preamble - 1) % self.stride
        if offset == 0:
            return None
        if offset == self.stride - 1:  # krc's closing brace: where an unclosed brace of the policy ends
            return self.lines, 1
        return self.preamble + offset, column


@dataclass(frozen=True)
class Workspace:
    vet_args: tuple[str, ...]
    policies: tuple[Policy, ...]
    wrapped: tuple[WrappedPolicy, ...]

    def policy_position(self, file: str, line: int, column: int) -> tuple[int, Location] | None:
        """A position CUE reported, as (policy index, the place in the user's policy file); None when it is in
        a file or on a line krc wrote."""
        found = _POLICY_FILE.search(file.replace("\\", "/"))
        if not found or int(found[1]) >= len(self.policies):
            return None
        index = int(found[1])
        position = self.wrapped[index].user_position(line, column)
        return (index, Location(self.policies[index].shown, *position)) if position else None


def read_policy(path: Path, shown: str) -> Policy:
    text = decode_text(read_confined(path, path.parent, limits.TEMPLATE_FILE_BYTES, shown), shown)
    return Policy(path.stem, path, shown, _package_of(text, shown), text)


def _package_line(lines: Sequence[str]) -> int | None:
    """Index of the package clause: the first statement, after comments."""
    for index, raw in enumerate(lines):
        line = raw.strip()
        if not line or line.startswith("//"):
            continue
        return index if _PACKAGE.match(line) else None
    return None


def _package_of(text: str, shown: str) -> str:
    lines = text.split("\n")  # CUE ends lines at newlines only
    index = _package_line(lines)
    if index is None:
        raise KrcError("a policy file starts with a package clause, e.g. 'package policy' (after comments); "
                       "add it as the first statement", Location(shown, 1, 1))
    found = _PACKAGE.match(lines[index].strip())
    assert found is not None
    return found.group(1)


def _code(line: str) -> str:
    """The line without its comment (import paths hold no //)."""
    return line.split("//", 1)[0].strip()


def _first_declaration(lines: Sequence[str], package_line: int) -> int:
    """Index of the first line after the package clause and the import declarations (len(lines) if none)."""
    in_group = False
    for index in range(package_line + 1, len(lines)):
        code = _code(lines[index])
        if in_group:
            in_group = ")" not in code
        elif _IMPORT_GROUP.match(code):
            in_group = ")" not in code
        elif code and not _IMPORT_ONE.match(code):
            return index
    return len(lines)


def wrap_policy(policy: Policy, index: int, environments: int) -> WrappedPolicy:
    """Policy `index` in package check, its declarations once per environment (see the module's docstring)."""
    lines = policy.text.split("\n")
    package_line = _package_line(lines)
    assert package_line is not None  # read_policy checked it
    first = _first_declaration(lines, package_line)
    out = [*lines[:package_line], f"package {PACKAGE}", *lines[package_line + 1:first]]
    for j in range(environments):
        given = input_definition(j)
        rendered = f"{given}.objects" if names_objects(policy) else "[]"
        out += [f"{RESULTS}: {environment_label(j)}: p{index}: {{env: {given}.env, objects: {rendered}",
                *lines[first:], "}"]
    return WrappedPolicy("\n".join(out) + "\n", first, len(lines))


def policy_file_name(index: int) -> str:
    return f"policy_{index}.cue"


def environment_label(index: int) -> str:
    return f"e{index}"


def input_definition(index: int) -> str:
    return f"#krcInput{index}"


def _cue_json(value: Any, what: str) -> str:
    try:
        return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise KrcError(f"{what} cannot be given to CUE: {err}") from None


_OBJECTS = re.compile(r"\bobjects\b")


def names_objects(policy: Policy) -> bool:
    """Whether the policy's text names `objects` at all. One that does not cannot constrain the rendered objects,
    so it is unified with an empty list instead of them: the same findings, a quarter less engine time per
    environment when half the policies read only `env`."""
    return bool(_OBJECTS.search(policy.text))


def write_workspace(root: Path, policies: Sequence[Policy],
                    environments: Sequence[tuple[str, dict[str, Any], Sequence[dict[str, Any]]]]) -> Workspace:
    """Write the files above into the empty directory `root`; environments are (name, data, objects)."""
    wrapped = tuple(wrap_policy(policy, i, len(environments)) for i, policy in enumerate(policies))
    for i, each in enumerate(wrapped):
        (root / policy_file_name(i)).write_text(each.text, encoding="utf-8")

    # one file for all environments: CUE v0.4 in WebAssembly loads a package of many files several times slower
    parts = [f"package {PACKAGE}\n"]
    for j, (name, data, objects) in enumerate(environments):
        env_json = _cue_json(data, f"environment {name}")
        objects_json = _cue_json(list(objects), f"the rendered objects of environment {name}")
        parts.append(f"// environment {json.dumps(name)}\n{input_definition(j)}: {{\n"
                     f"env: {env_json}\nobjects: {objects_json}\n}}\n")
    (root / INPUT_FILE).write_text("\n".join(parts), encoding="utf-8")
    files = (INPUT_FILE, *(policy_file_name(i) for i in range(len(policies))))
    return Workspace(("vet", "-c", *(f"./{name}" for name in files)), tuple(policies), wrapped)
