"""`runtimeEnvYAML` is a YAML map (Ray's runtime_env), written as a string.

Fails:

    kind: RayJob
    spec:
      runtimeEnvYAML: "- pip"

Passes:

    kind: RayJob
    spec:
      runtimeEnvYAML: |
        pip: [requests==2.26.0]
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import KrcError, Problem
from ..documents import yamlio
from .rule import About
from .support.context import LintContext
from .support.ray_objects import job_views

ABOUT = About("rayjob/runtime-env-yaml", "error", "runtimeEnvYAML parses as a YAML map")


def check(context: LintContext) -> Iterator[Problem]:
    for job in job_views(context):
        text = job.spec.get("runtimeEnvYAML")
        if text is None or text == "":
            continue
        try:  # krc's bounded loader: brackets nested 100,000 deep are refused, not a crash of the C parser
            value = yamlio.load(str(text), "runtimeEnvYAML")
        except KrcError as err:
            problem = err.problems[0].message.removeprefix("invalid YAML: ").strip()
            words = (f"runtimeEnvYAML is refused: {problem}" if "KRC_" in problem  # one of krc's bounds
                     else f"runtimeEnvYAML is not valid YAML ({problem}); fix its syntax")
            yield job.obj.problem(words, job.at("runtimeEnvYAML"))
            continue
        if value is not None and not isinstance(value, dict):
            yield job.obj.problem(f"runtimeEnvYAML is a {type(value).__name__}, not a map; write keys such as pip, "
                                  "env_vars, working_dir", job.at("runtimeEnvYAML"))
