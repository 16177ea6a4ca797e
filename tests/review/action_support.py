"""A small runner for a composite action's steps, as a GitHub runner runs them: each `run` step in bash with
`-eo pipefail`, its `env`, `working-directory` and `if` evaluated, GITHUB_OUTPUT read back into
`steps.<id>.outputs` and GITHUB_ENV's `NAME=value` lines into the later steps' environment. Steps that `uses:`
another action (setup-python, cache, upload-artifact) are GitHub's: they are recorded with their inputs evaluated,
not run. Expressions are the few the action uses: `inputs.*`, `steps.*.outputs.*`, `github.*`, `==` and `!=`
against a quoted string, `&&`, and `always()`."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")


@dataclass
class ActionRun:
    inputs: dict[str, str]
    github: dict[str, Any]
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    ran: list[tuple[str, int, str]] = field(default_factory=list)  # (step name, exit code, output)
    used: list[tuple[str, dict[str, str]]] = field(default_factory=list)  # (action, its evaluated inputs)
    failed: bool = False

    def value(self, expression: str) -> Any:
        if "&&" in expression:
            return all(self.value(part.strip()) for part in expression.split("&&"))
        if expression == "always()":
            return True
        if expression == "failure()":
            return self.failed
        for operator in ("!=", "=="):
            if operator in expression:
                left, right = (part.strip() for part in expression.split(operator, 1))
                return (str(self.value(left)) == right.strip("'")) == (operator == "==")
        head, *rest = expression.split(".")
        source: Any = {"inputs": self.inputs, "github": self.github, "steps": self.outputs}[head]
        for part in rest:
            source = source.get(part, "") if isinstance(source, dict) else ""
        return source

    def text(self, template: Any) -> str:
        return EXPRESSION.sub(lambda m: str(self.value(m[1])), str(template))


def run_action(action: Path, workspace: Path, inputs: dict[str, str], github: dict[str, Any],
               env: dict[str, str]) -> ActionRun:
    spec = yaml.safe_load(action.read_text())
    defaults = {name: str(i.get("default", "")) for name, i in spec["inputs"].items()}
    state = ActionRun({**defaults, **inputs}, github)
    state.inputs = {k: state.text(v) for k, v in state.inputs.items()}
    runner_temp = Path(env["RUNNER_TEMP"])
    exported = runner_temp / "github-env"
    env = {**env, "GITHUB_ENV": str(exported)}
    for index, step in enumerate(spec["runs"]["steps"]):
        condition = step.get("if")
        # as on GitHub: a step runs after a failure only under always(), and only when its condition holds
        if (state.failed and not str(condition).startswith("always()")) \
                or (condition is not None and not state.value(condition)):
            continue
        if "uses" in step:
            state.used.append((step["uses"], {k: state.text(v) for k, v in (step.get("with") or {}).items()}))
            continue
        output_file = runner_temp / f"output-{index}"
        output_file.write_text("")
        exported.write_text("")
        step_env = {**env, "GITHUB_OUTPUT": str(output_file), "GITHUB_ACTION_PATH": str(action.parent),
                    **{k: state.text(v) for k, v in (step.get("env") or {}).items()}}
        folder = workspace / state.text(step.get("working-directory", "."))
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", state.text(step["run"])],
                              cwd=folder, env=step_env, capture_output=True, text=True, timeout=600)
        state.ran.append((step["name"], done.returncode, done.stdout + done.stderr))
        env.update(line.split("=", 1) for line in exported.read_text().splitlines() if "=" in line)
        if "id" in step:
            state.outputs[step["id"]] = {"outputs": dict(
                line.split("=", 1) for line in output_file.read_text().splitlines() if "=" in line)}
        if done.returncode != 0:
            state.failed = True
    return state


def base_environment(tmp: Path, extra: dict[str, str]) -> dict[str, str]:
    """What a runner gives every step: a PATH, the runner's folders, the GitHub variables the scripts read."""
    (tmp / "runner-temp").mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k.startswith(("KRC_", "HOME", "LANG"))}
    return {**env, "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "RUNNER_TEMP": str(tmp / "runner-temp"),
            "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"), "CI": "true", **extra}
