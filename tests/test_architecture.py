"""The layout the import-layer contract (pyproject.toml, `make check`) cannot see: no imports inside functions,
and a rule registry that holds every rule module."""
from __future__ import annotations

import ast
from pathlib import Path

from compiler.rules import RULES, SEVERITIES

PACKAGE = Path(__file__).resolve().parents[1] / "compiler"


def test_no_module_imports_inside_functions() -> None:
    """A function-level import hides a dependency from the layer contract (and usually dodges a cycle)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found += [f"{path.relative_to(PACKAGE)}:{inner.lineno}" for inner in ast.walk(node)
                          if isinstance(inner, (ast.Import, ast.ImportFrom))]
    assert found == []


def test_every_rule_module_is_registered_once_with_a_valid_severity() -> None:
    modules = {p.stem for p in (PACKAGE / "rules").glob("*.py")} - {"__init__", "rule"}
    assert {rule.__name__.rsplit(".", 1)[1] for rule in RULES.values()} == modules
    for rule_id, rule in RULES.items():
        assert rule.ID == rule_id and rule.SEVERITY in SEVERITIES and rule.SUMMARY, rule_id
        assert "fail" in (rule.__doc__ or "").lower() and "pass" in (rule.__doc__ or "").lower(), rule_id


MAX_MODULE_LINES = 350  # "modules under ~300 lines": a module past this wants splitting by what it holds


def test_modules_stay_small() -> None:
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text(encoding="utf-8").splitlines())
             for p in sorted(PACKAGE.rglob("*.py"))}
    assert {path: n for path, n in sizes.items() if n > MAX_MODULE_LINES} == {}
