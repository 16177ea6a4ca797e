"""`x-kubernetes-validations` rules: CEL compiled once (per distinct rule text) with cel-python, run on `self`.

Like the API server on create, a rule that refers to `oldSelf` is a transition rule and is skipped: there is
no old object to compare with. Values reach CEL as the API server gives them: maps, lists, strings, ints,
doubles, bools (date-like YAML scalars become strings). Every rule in the KubeRay 1.5.2-1.7.0 CRDs compiles and
evaluates with cel-python as is (the Argo CD 3.5.1 CRDs carry none), so no rule is re-implemented by hand.
"""
from __future__ import annotations

import datetime
import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import celpy
import lark
from celpy import celtypes
from celpy.celparser import CELParser
from celpy.evaluation import CELEvalError

from ..problems import KrcError
from ..user_cache import cache_dir

_OLD_SELF = re.compile(r"\boldSelf\b")


def _prime_parser() -> None:
    """celpy builds its LALR parser tables from the grammar on first use (about half a second); lark can keep
    them in a cache file. Same grammar and options as celpy's own CELParser, plus the cache."""
    if CELParser.CEL_PARSER is not None:
        return
    grammar = (Path(celpy.__file__).parent / "cel.lark").read_text(encoding="utf-8")
    # keyed by what the tables are built from: the grammar text and the lark that builds them
    key = hashlib.sha256(f"{lark.__version__}\0{grammar}".encode()).hexdigest()[:16]
    cache = cache_dir() / f"cel-lark-{key}.cache"
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache_option: Any = str(cache)
    except OSError:  # a read-only home: build the tables every time
        cache_option = False
    CELParser.CEL_PARSER = lark.Lark(
        grammar, parser="lalr", start="expr", debug=True, g_regex_flags=re.M,
        lexer_callbacks={"IDENT": CELParser.ambiguous_literals}, propagate_positions=True,
        maybe_placeholders=False, priority="invert", tree_class=lark.Tree, cache=cache_option)


@functools.cache
def _environment() -> celpy.Environment:
    _prime_parser()
    return celpy.Environment()


@functools.cache
def _program(expression: str) -> Any:
    """Compiling is the slow part (lark parse, ~1-20 ms); identical rules appear many times across CRDs."""
    environment = _environment()
    return environment.program(environment.compile(expression))


def to_cel(value: Any) -> Any:
    kind = type(value)
    if kind is str:
        return celtypes.StringType(value)
    if kind is bool:
        return celtypes.BoolType(value)
    if kind is int:
        return celtypes.IntType(value)
    if kind is float:
        return celtypes.DoubleType(value)
    if kind is dict:
        return celtypes.MapType({celtypes.StringType(k): to_cel(v) for k, v in value.items()})
    if kind is list:
        return celtypes.ListType([to_cel(v) for v in value])
    if value is None:
        return None
    if isinstance(value, (datetime.date, datetime.datetime)):
        return celtypes.StringType(value.isoformat())
    return celtypes.StringType(str(value))


@dataclass(frozen=True)
class CelRule:
    rule: str
    message: str
    message_expression: str
    field_path: str  # relative JSON path such as ".spec.foo", appended to the node's path when set

    def failure(self, value: Any) -> str | None:
        """None when the rule holds; otherwise the message the API server would give."""
        activation = {"self": to_cel(value)}
        try:
            result = _program(self.rule).evaluate(activation)
        except Exception as err:  # celpy raises its own and Python errors for runtime faults
            return f"failed rule: {self.rule} (evaluation error: {err})"
        if isinstance(result, CELEvalError):
            return f"failed rule: {self.rule} (evaluation error: {result.args[0] if result.args else result})"
        if result is True or (isinstance(result, celtypes.BoolType) and bool(result)):
            return None
        return self._message(activation)

    def _message(self, activation: dict[str, Any]) -> str:
        if self.message_expression:
            try:
                text = _program(self.message_expression).evaluate(activation)
                if isinstance(text, str) and text.strip():
                    return str(text)
            except Exception:  # the API server falls back to message/rule when messageExpression fails
                pass
        return self.message or f"failed rule: {self.rule}"


def compile_rules(rules: Any, where: str) -> tuple[CelRule, ...]:
    """The rules of one schema node that can run without an old object, each compiled now."""
    compiled = []
    for entry in rules or ():
        rule = str(entry.get("rule", "")) if isinstance(entry, dict) else ""
        if not rule:
            raise KrcError(f"{where}: an x-kubernetes-validations entry has no rule; fix the CRD")
        if _OLD_SELF.search(rule) or entry.get("optionalOldSelf"):
            continue  # transition rule: only meaningful on update
        message_expression = str(entry.get("messageExpression", ""))
        try:
            _program(rule)
            if message_expression:
                _program(message_expression)
        except Exception as err:
            raise KrcError(f"{where}: CEL rule {rule!r} does not compile ({err}); fix the CRD") from None
        compiled.append(CelRule(rule, str(entry.get("message", "")), message_expression,
                                str(entry.get("fieldPath", ""))))
    return tuple(compiled)
