"""Findings as text, JSON, SARIF 2.1.0 (code scanning) or GitHub workflow commands; output is deterministic."""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .. import __version__
from ..diagnostics.problems import Problem, safe_json, safe_text
from ..rules import RULES, Rule

_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _object_fields(problem: Problem) -> dict[str, Any]:
    kind, _, rest = problem.object.partition("/")
    namespace, _, name = rest.rpartition("/") if "/" in rest else ("", "", rest)
    return {"kind": kind, "namespace": namespace, "name": name}


def as_dict(problem: Problem) -> dict[str, Any]:
    loc = problem.location
    return {
        "rule": problem.rule,
        "severity": problem.severity,
        "message": problem.message,
        "file": loc.file if loc else "",
        "line": loc.line if loc else 0,
        "column": loc.column if loc else 0,
        "object": problem.object,
        "objectRef": _object_fields(problem) if problem.object else {},
        "path": problem.path,
    }


def text(problems: list[Problem]) -> str:
    return "".join(p.one_line() + "\n" for p in problems)


def as_json(problems: list[Problem]) -> str:
    return safe_json(json.dumps([as_dict(p) for p in problems], indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def _rule_descriptor(rule_id: str, rule: Rule | None) -> dict[str, Any]:
    if rule is None:  # schema findings and other non-rule checks
        return {"id": rule_id, "shortDescription": {"text": rule_id}}
    return {
        "id": rule_id,
        "shortDescription": {"text": rule.ABOUT.summary},
        "fullDescription": {"text": (rule.__doc__ or rule.ABOUT.summary).strip()},
        "defaultConfiguration": {"level": _SARIF_LEVEL[rule.ABOUT.severity]},
    }


def sarif(problems: list[Problem], tool_version: str = __version__) -> str:
    rule_ids = sorted({p.rule or "krc" for p in problems} | set(RULES))
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    results = []
    for p in problems:
        rule_id = p.rule or "krc"
        result: dict[str, Any] = {"ruleId": rule_id, "ruleIndex": index[rule_id], "level": _SARIF_LEVEL[p.severity],
                        "message": {"text": p.message}}
        if p.location and p.location.file:
            region = {"startLine": max(p.location.line, 1), "startColumn": max(p.location.column, 1)}
            result["locations"] = [{"physicalLocation": {"artifactLocation": {"uri": p.location.file},
                                                         "region": region}}]
        if p.object:
            result["properties"] = {"object": p.object, "path": p.path}
        results.append(result)
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "krc", "version": tool_version, "informationUri": "https://ray-project.github.io/kuberay/",
                                "rules": [_rule_descriptor(r, RULES.get(r)) for r in rule_ids]}},
            "results": results,
        }],
    }
    return safe_json(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github(problems: list[Problem]) -> str:
    lines = []
    for p in problems:
        props = []
        if p.location and p.location.file:
            props.append(f"file={_escape_property(p.location.file)}")
            if p.location.line:
                props.append(f"line={p.location.line}")
                props.append(f"col={p.location.column or 1}")
        if p.rule:
            props.append(f"title={_escape_property(p.rule)}")
        message = p.message if not p.object else f"{p.object}: {p.message}"
        # %0A-escaped as GitHub asks; any other control character escaped as everywhere (problems.safe_text)
        lines.append(safe_text(f"::{_GITHUB_LEVEL[p.severity]} {','.join(props)}::{_escape_data(message)}") + "\n")
    return "".join(lines)


# `krc lint --format` offers this registry's keys
FORMATTERS: dict[str, Callable[[list[Problem]], str]] = {"text": text, "json": as_json, "sarif": sarif,
                                                         "github": github}
FORMATS = tuple(FORMATTERS)


def render(problems: list[Problem], fmt: str) -> str:
    return FORMATTERS[fmt](problems)
