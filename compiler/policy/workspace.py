"""The CUE workspace for one engine run: every policy unified with every environment, in a temporary directory.

    cue.mod/module.cue              module: "krc.local/policycheck"
    policy/p<i>/<file>.cue          the policy file, byte for byte (so CUE's line numbers are the user's)
    policy/p<i>/krc_inputs.cue      declares `env` and `objects` in the policy's package
    input/environments.cue          #e<j>: {env: <JSON>, objects: <JSON>} for each j  (JSON is valid CUE)
    check.cue                       results: e<j>: p<i>: P<i> & {env: inputs.#e<j>.env, objects: ...}

Each policy is a package, imported once and unified with each environment, so one `cue vet` evaluates the
whole matrix. The inputs are definitions, hence closed: a policy that requires a field the environment lacks
gets a real error ("field x not allowed") instead of an incomplete value CUE would only report on its own.
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

MODULE = "krc.local/policycheck"
POLICY_DIR = "policy"
INPUT_DIR = "input"
INPUT_FILE = "environments.cue"
CHECK_FILE = "check.cue"
INPUTS_DECLARATION = "krc_inputs.cue"

_PACKAGE = re.compile(r"^package\s+([A-Za-z_][A-Za-z0-9_]*)\s*$")


@dataclass(frozen=True)
class Policy:
    name: str  # the file stem; findings carry the rule id policy/<name>
    path: Path
    shown: str  # how messages name the file
    package: str
    text: str


def read_policy(path: Path, shown: str) -> Policy:
    text = decode_text(read_confined(path, path.parent, limits.TEMPLATE_FILE_BYTES, shown), shown)
    if path.name == INPUTS_DECLARATION:
        raise KrcError(f"{INPUTS_DECLARATION} is the name krc gives its own generated file; rename the policy",
                       Location(shown))
    return Policy(path.stem, path, shown, _package_of(text, shown), text)


def _package_of(text: str, shown: str) -> str:
    """The package clause: it must come first, after comments, so krc can import the file as a package."""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("//"):
            continue
        found = _PACKAGE.match(line)
        if found:
            return found.group(1)
        break
    raise KrcError("a policy file starts with a package clause, e.g. 'package policy' (after comments); "
                   "add it as the first statement", Location(shown, 1, 1))


def policy_dir_name(index: int) -> str:
    return f"p{index}"


def environment_label(index: int) -> str:
    return f"e{index}"


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
                    environments: Sequence[tuple[str, dict[str, Any], Sequence[dict[str, Any]]]]) -> None:
    """Write the files above into the empty directory `root`; environments are (name, data, objects)."""
    (root / "cue.mod").mkdir()
    # CUE from v0.9 on wants a language version; v0.4 (the WebAssembly build) ignores the field
    (root / "cue.mod" / "module.cue").write_text(f'module: "{MODULE}"\nlanguage: version: "v0.9.0"\n',
                                                 encoding="utf-8")

    for i, policy in enumerate(policies):
        folder = root / POLICY_DIR / policy_dir_name(i)
        folder.mkdir(parents=True)
        (folder / policy.path.name).write_text(policy.text, encoding="utf-8")
        (folder / INPUTS_DECLARATION).write_text(
            f"package {policy.package}\n\nenv: {{...}}\nobjects: [...{{...}}]\n", encoding="utf-8")

    # one file for all environments: CUE v0.4 in WebAssembly loads a package of many files several times slower
    parts = ["package input\n"]
    for j, (name, data, objects) in enumerate(environments):
        env_json = _cue_json(data, f"environment {name}")
        objects_json = _cue_json(list(objects), f"the rendered objects of environment {name}")
        parts.append(f"// environment {json.dumps(name)}\n#{environment_label(j)}: {{\n"
                     f"env: {env_json}\nobjects: {objects_json}\n}}\n")
    (root / INPUT_DIR).mkdir()
    (root / INPUT_DIR / INPUT_FILE).write_text("\n".join(parts), encoding="utf-8")

    imports = [f'\tP{i} "{MODULE}/{POLICY_DIR}/{policy_dir_name(i)}:{p.package}"' for i, p in enumerate(policies)]
    imports.append(f'\tinputs "{MODULE}/{INPUT_DIR}:input"')
    lines = ["package check", "", "import (", *imports, ")", ""]
    for j in range(len(environments)):
        label = environment_label(j)
        for i, policy in enumerate(policies):
            given = f"inputs.#{label}.objects" if names_objects(policy) else "[]"
            lines.append(f"results: {label}: p{i}: P{i} & {{env: inputs.#{label}.env, objects: {given}}}")
    (root / CHECK_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")


VET_ARGS = ("vet", "-c", f"./{CHECK_FILE}")
