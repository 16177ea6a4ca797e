"""What an Argo CD request asks the plugin for, read from the variables the repo-server sets.

Precedence, most specific first: command-line options (local runs), `ARGOCD_APP_PARAMETERS` (the canonical JSON
of the parameters set on the Application), `PARAM_<NAME>` (the same values, flattened and escaped), then
`ARGOCD_ENV_KRC_<NAME>` (plugin env entries). Argo CD never sends announced defaults, so the defaults live here.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from ..diagnostics.problems import KrcError
from ..k8s.names import dns1123_label_errors
from ..project.paths import shown_name
from ..settings import limits

Selection = Literal["include", "exclude", "only"]
SELECTIONS: tuple[str, ...] = ("include", "exclude", "only")

# name -> (default, allowed values or None for free text)
PARAMETERS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "environment": ("", None),
    "crds": ("include", SELECTIONS),
    "applications": ("exclude", SELECTIONS),
    # the operator chart's objects as the pinned Helm renders them (golden/<env>/chart/): the operator
    # Application deploys them through the plugin, so what Argo CD applies is what krc reviewed
    "operator": ("include", SELECTIONS),
    "cluster": ("", None),
    # the chart version the Application was written for: it makes the CRDs app's spec change with a chart bump,
    # so the root app re-syncs it in its wave (before the operator); generate refuses a stale one
    "chartVersion": ("", None),
}


@dataclass(frozen=True)
class Request:
    environment: str  # '' when nobody chose one
    crds: Selection = "include"  # the chart's CRDs, annotated for server-side apply
    applications: Selection = "exclude"  # the environment's Argo CD child Applications
    cluster: str = ""  # retarget the child Applications at this cluster name (ApplicationSet use)
    chart_version: str = ""  # the environment's pinned chart version, when the Application states it
    operator: Selection = "include"  # the operator chart's objects (Helm's render, without CRDs)


def _escaped(name: str) -> str:
    """Argo CD's PARAM_ name escaping: upper case, everything outside [A-Z0-9_] becomes '_'."""
    return re.sub(r"[^A-Z0-9_]", "_", name.upper())


# free-text parameters whose values become names: each must be a DNS-1123 label (the environment is a file name
# under environments/, the cluster becomes part of Application names)
NAMED_PARAMETERS = ("environment", "cluster")
MAX_PARAMETERS_JSON = 64 * 1024


def _utf8(where: str, value: str) -> str:
    """`value` when it is text; the process environment decodes bytes that are not UTF-8 to lone surrogates
    (surrogateescape), and JSON may spell one (\\ud800): neither is text a name can hold."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as err:
        bad = value[err.start]
        what, why = ((f"the byte 0x{ord(bad) - 0xDC00:02x}", "not UTF-8") if 0xDC80 <= ord(bad) <= 0xDCFF
                     else (f"a lone surrogate (\\u{ord(bad):04x})", "not text"))
        raise KrcError(f"{where} holds {what} at character {err.start + 1}, which is {why}; set it to UTF-8 text"
                       ) from None
    return value


def _checked_value(name: str, value: str) -> str:
    """A parameter value that is UTF-8 text, bounded in size, printable, and a DNS-1123 label where it becomes a
    name."""
    _utf8(f"plugin parameter '{name}'", value)
    if len(value.encode("utf-8")) > limits.PARAMETER_BYTES.value:
        raise KrcError(f"plugin parameter '{name}': " + limits.PARAMETER_BYTES.exceeded(f"a value of {len(value)} "
                                                                                        "characters"))
    if not value.isprintable():
        raise KrcError(f"plugin parameter '{name}' is '{shown_name(value)}', which holds a newline or control "
                       "character; set a plain name")
    if name in NAMED_PARAMETERS and value:
        errors = dns1123_label_errors(value)
        if errors:
            raise KrcError(f"plugin parameter '{name}' is '{shown_name(value)}': it {errors[-1]} (a Kubernetes "
                           "DNS-1123 label, at most 63 characters)")
    return value


def _from_json(raw: str) -> dict[str, str]:
    if len(raw) > MAX_PARAMETERS_JSON:
        raise KrcError(f"ARGOCD_APP_PARAMETERS is {len(raw)} characters, more than {MAX_PARAMETERS_JSON}; check the "
                       "Application's plugin parameters")
    _utf8("ARGOCD_APP_PARAMETERS", raw)
    try:
        entries = json.loads(raw)
    except ValueError as err:
        raise KrcError(f"ARGOCD_APP_PARAMETERS is not valid JSON ({err}); check the Application's plugin "
                       "parameters") from None
    except RecursionError:  # brackets nested thousands deep: Argo CD's parameters nest three
        raise KrcError("ARGOCD_APP_PARAMETERS nests its JSON arrays or objects too deep to read; check the "
                       "Application's plugin parameters") from None
    if not isinstance(entries, list):
        raise KrcError("ARGOCD_APP_PARAMETERS must be a JSON array of {name, string|array|map}")
    found: dict[str, str] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise KrcError(f"ARGOCD_APP_PARAMETERS entry {entry!r} has no name; give each parameter a name")
        name = entry["name"]
        if name not in PARAMETERS:
            continue  # a parameter for someone else (another tool reading the same Application) is not ours
        if not isinstance(entry.get("string"), str):
            raise KrcError(f"plugin parameter '{name}' must be a string parameter (string: ...), "
                           "not an array or a map")
        found[name] = entry["string"]
    return found


def read_request(environ: Mapping[str, str], options: Mapping[str, str | None] | None = None) -> Request:
    """The request from the process environment, with explicit `options` (non-None) taking precedence."""
    from_json = _from_json(environ["ARGOCD_APP_PARAMETERS"]) if environ.get("ARGOCD_APP_PARAMETERS") else {}
    values: dict[str, str] = {}
    for name, (default, allowed) in PARAMETERS.items():
        option = (options or {}).get(name)
        variables = (f"PARAM_{_escaped(name)}", f"ARGOCD_ENV_KRC_{_escaped(name)}")
        candidates = (option, from_json.get(name), *(_utf8(v, environ[v]) if v in environ else None for v in variables))
        value = _checked_value(name, next((c.strip() for c in candidates if c is not None and c.strip()), default))
        if allowed is not None and value not in allowed:
            raise KrcError(f"plugin parameter '{name}' is '{value}'; use one of: {', '.join(allowed)}")
        values[name] = value
    request = Request(values["environment"], values["crds"], values["applications"],  # type: ignore[arg-type]
                      values["cluster"], values["chartVersion"], values["operator"])  # type: ignore[arg-type]
    only = [name for name, value in (("crds", request.crds), ("applications", request.applications),
                                     ("operator", request.operator)) if value == "only"]
    if len(only) > 1:
        raise KrcError(f"plugin parameters {' and '.join(f'{n}=only' for n in only)} exclude each other; pick one")
    return request
