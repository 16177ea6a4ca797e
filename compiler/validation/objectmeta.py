"""`metadata` of a custom resource (and of an embedded resource): the API server checks it as ObjectMeta, not
against the CRD schema (which only says `type: object` there)."""
from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from ..fieldpath import LinkedPath
from ..k8s.names import (
    dns1123_label_errors,
    dns1123_subdomain_errors,
    first_error,
    label_value_errors,
    qualified_name_errors,
)

# (path, rule, message, severity)
Report = Callable[[LinkedPath, str, str, str], None]

OBJECT_META_FIELDS = (
    "annotations", "creationTimestamp", "deletionGracePeriodSeconds", "deletionTimestamp", "finalizers",
    "generateName", "generation", "labels", "managedFields", "name", "namespace", "ownerReferences",
    "resourceVersion", "selfLink", "uid",
)
_KNOWN = frozenset(OBJECT_META_FIELDS)
_STRING_FIELDS = ("name", "generateName", "namespace", "uid", "resourceVersion", "selfLink")
TOTAL_ANNOTATION_BYTES = 256 * 1024


def check_object_meta(meta: Any, path: LinkedPath, report: Report, require_name: bool) -> Any:
    """Reports what the API server would reject in `meta`; returns it with unknown fields dropped."""
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        report(path, "schema/type", "metadata must be a map; fix the document", "error")
        return meta
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if key in _KNOWN:
            out[key] = value
            continue
        close = difflib.get_close_matches(str(key), OBJECT_META_FIELDS, n=1)
        hint = f"did you mean '{close[0]}'?" if close else "remove it"
        report((path, key), "schema/unknown-field",
               f"unknown field '{key}' in metadata; the API server would drop it; {hint}", "error")
    for key in _STRING_FIELDS:
        if key in out and not isinstance(out[key], str):
            report((path, key), "schema/type", f"metadata.{key} must be a string; quote the value", "error")
            return out
    name, generate_name = out.get("name"), out.get("generateName")
    if name:
        _shape(report, (path, "name"), name, first_error(dns1123_subdomain_errors(name)), "name")
    elif require_name and not generate_name:
        report((path, "name"), "schema/required",
               "metadata.name is required (or metadata.generateName); add a name", "error")
    if out.get("namespace"):
        _shape(report, (path, "namespace"), out["namespace"], first_error(dns1123_label_errors(out["namespace"])),
               "namespace")
    _check_string_map(out.get("labels"), (path, "labels"), report, labels=True)
    _check_string_map(out.get("annotations"), (path, "annotations"), report, labels=False)
    finalizers = out.get("finalizers")
    if finalizers is not None and not (isinstance(finalizers, list) and all(isinstance(f, str) for f in finalizers)):
        report((path, "finalizers"), "schema/type", "metadata.finalizers must be a list of strings; fix it",
               "error")
    return out


def _shape(report: Report, path: LinkedPath, value: str, problem: str | None, what: str) -> None:
    if problem:
        report(path, "schema/metadata", f"metadata.{what} '{value}' {problem}; rename it", "error")


def _check_string_map(value: Any, path: LinkedPath, report: Report, labels: bool) -> None:
    what = "labels" if labels else "annotations"
    if value is None:
        return
    if not isinstance(value, dict):
        report(path, "schema/type", f"metadata.{what} must be a map of strings; fix it", "error")
        return
    size = 0
    for key, item in value.items():
        key_text = str(key)
        problem = first_error(qualified_name_errors(key_text))
        if problem:
            report((path, key_text), "schema/metadata", f"{what[:-1]} key '{key_text}' {problem}; rename it",
                   "error")
        if not isinstance(item, str):
            report((path, key_text), "schema/type",
                   f"{what[:-1]} '{key_text}' must be a string, not {type(item).__name__}; quote the value",
                   "error")
            continue
        size += len(key_text) + len(item)
        if labels and (problem := first_error(label_value_errors(item))):
            report((path, key_text), "schema/metadata", f"label value '{item}' {problem}; change it", "error")
    if not labels and size > TOTAL_ANNOTATION_BYTES:
        report(path, "schema/bounds", f"annotations total {size} bytes, more than {TOTAL_ANNOTATION_BYTES}; "
                                      "move large data to a ConfigMap", "error")
