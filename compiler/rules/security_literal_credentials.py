"""Tokens and passwords are referenced from Secrets, never written into manifests.

Flags environment variables whose name says they hold a credential with a literal `value`, a literal
`rayStartParams.redis-password`, and a literal `gcsFaultToleranceOptions.redisPassword.value`. A name says so
when one of its `_`-separated words is TOKEN, PASSWORD, PASSWD, SECRET, CREDENTIAL(S), APIKEY or ACCESSKEY, or
two adjacent words are API/ACCESS/PRIVATE KEY. Whole words only: `VLLM_MAX_TOKENS` or `TOKENIZER` are
settings, not credentials. Numbers, on/off switches, `$(VAR)` expansions and file paths are not credentials.

Fails:

    env:
    - name: HF_TOKEN
      value: hf_abcdef

Passes:

    env:
    - name: HF_TOKEN
      valueFrom: {secretKeyRef: {name: hf, key: token}}
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..diagnostics.problems import Problem
from ..k8s.secrets import names_credential
from .rule import About
from .support.context import LintContext, LintObject
from .support.ray_objects import cluster_views

ABOUT = About("security/literal-credentials", "warning", "credentials come from Secret references, not literal values")

# names that say where a credential is, or how it is used, not the credential itself
_NOT_A_VALUE = re.compile(r"(_FILE|_PATH|_DIR|_NAME|_MODE|_ENABLED|_URL|_ENDPOINT|_REF)$", re.IGNORECASE)
_EXPANSION = re.compile(r"^\$(\{|\()?[A-Za-z_][A-Za-z0-9_]*(\}|\))?$")


_SWITCH = frozenset({"true", "false", "yes", "no", "on", "off", "enabled", "disabled"})
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)$")  # a limit or a count (MAX_TOKEN: "4096"), not a secret
_FILE_PATH = re.compile(r"^/\S*$")  # where a credential is mounted, not the credential


def _literal(value: Any) -> bool:
    """A value that could be a secret: not empty, not a $(VAR) expansion, switch, number or file path."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    return (text != "" and not _EXPANSION.match(text) and text.lower() not in _SWITCH
            and not _NUMBER.match(text) and not _FILE_PATH.match(text))


def _env_lists(value: Any, path: tuple[Any, ...], found: list[tuple[tuple[Any, ...], list[Any]]]) -> None:
    """Every `env` list under `value`, with its path, in document order. A plain recursion that steps only into
    mappings and lists: it visits every node of every spec, most of them scalars."""
    if isinstance(value, dict):
        for key, child in value.items():
            if key == "env" and isinstance(child, list):
                found.append((path + (key,), child))
            elif isinstance(child, (dict, list)):
                _env_lists(child, path + (key,), found)
    elif isinstance(value, list):
        for i, child in enumerate(value):
            if isinstance(child, (dict, list)):
                _env_lists(child, path + (i,), found)


def _env_findings(obj: LintObject) -> Iterator[Problem]:
    found: list[tuple[tuple[Any, ...], list[Any]]] = []
    _env_lists(obj.document.get("spec"), ("spec",), found)
    for path, env in found:
        for i, entry in enumerate(env):
            name = str(entry.get("name", "")) if isinstance(entry, dict) else ""
            if names_credential(name) and not _NOT_A_VALUE.search(name) and _literal(entry.get("value")):
                yield obj.problem(f"env {name} holds a literal credential; store it in a Secret and use "
                                  "valueFrom.secretKeyRef", path + (i, "value"))


def check(context: LintContext) -> Iterator[Problem]:
    for obj in context.kuberay_objects():
        yield from _env_findings(obj)
    for cluster in cluster_views(context):
        password = cluster.head.ray_start_params.get("redis-password")
        if _literal(password):
            yield cluster.obj.problem("rayStartParams.redis-password is written literally; use "
                                      "gcsFaultToleranceOptions.redisPassword.valueFrom.secretKeyRef",
                                      cluster.head.path + ("rayStartParams", "redis-password"))
        options = cluster.spec.get("gcsFaultToleranceOptions")
        if isinstance(options, dict) and isinstance(options.get("redisPassword"), dict) and _literal(
                options["redisPassword"].get("value")):
            yield cluster.obj.problem("gcsFaultToleranceOptions.redisPassword.value is written literally; use "
                                      "redisPassword.valueFrom.secretKeyRef",
                                      cluster.at("gcsFaultToleranceOptions", "redisPassword", "value"))
