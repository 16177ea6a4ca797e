"""Kubernetes name and label syntax, as the API machinery validates it (apimachinery validation.go)."""
from __future__ import annotations

import re

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
# What may become part of an output file name: a kind, and an object or CRD name (DNS subdomains, plus the
# characters RBAC names use). Never '/', never a leading '.', never control characters.
_FILE_KIND = re.compile(r"^[A-Za-z][A-Za-z0-9]{0,62}$")
_FILE_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.:]{0,251}[A-Za-z0-9])?$")


def _shown(value: object) -> str:
    text = str(value)
    text = text if text.isprintable() else text.encode("unicode_escape").decode("ascii")
    return text if len(text) <= 80 else text[:77] + "..."


def _syntax_errors(value: str, longest: int, pattern: re.Pattern[str], syntax: str) -> list[str]:
    """The apimachinery validators' two checks, each its own message: the length, then the pattern."""
    errors = []
    if len(value) > longest:
        errors.append(f"must be no more than {longest} characters")
    if not pattern.fullmatch(value):
        errors.append(syntax)
    return errors


def dns1123_subdomain_errors(value: str) -> list[str]:
    """Object names of most kinds (metadata.name), and the prefix of a label key."""
    return _syntax_errors(value, 253, _DNS1123_SUBDOMAIN, "must consist of lower case alphanumeric characters, '-' "
                          "or '.', and start and end with an alphanumeric character")


def first_error(errors: list[str]) -> str | None:
    """The first of a validator's errors, for checks that report one message per field."""
    return errors[0] if errors else None


def dns1035_label_errors(value: str) -> list[str]:
    return _syntax_errors(value, 63, _DNS1035, "must consist of lower case alphanumeric characters or '-', start "
                          "with a letter and end with a letter or digit")


def dns1123_label_errors(value: str) -> list[str]:
    return _syntax_errors(value, 63, _DNS1123_LABEL, "must consist of lower case alphanumeric characters or '-' and "
                          "start and end with one")


def qualified_name_errors(value: str) -> list[str]:
    """A label key: optional DNS subdomain prefix and '/', then a name part of at most 63 characters."""
    prefix, _, name = value.rpartition("/")
    errors = []
    if "/" in value and (not prefix or dns1123_subdomain_errors(prefix)):
        errors.append("the prefix must be a DNS subdomain (lower case, digits, '-' and '.')")
    if not name:
        errors.append("the name part must not be empty")
    elif len(name) > 63:
        errors.append("the name part must be no more than 63 characters")
    elif not _QUALIFIED_PART.fullmatch(name):
        errors.append("the name part must consist of alphanumeric characters, '-', '_' or '.', and start and end "
                      "with an alphanumeric character")
    return errors


def label_value_errors(value: str) -> list[str]:
    if value == "":
        return []
    if len(value) > 63:
        return ["must be no more than 63 characters"]
    if not _QUALIFIED_PART.fullmatch(value):
        return ["must be empty or consist of alphanumeric characters, '-', '_' or '.', and start and end with an "
                "alphanumeric character"]
    return []


def file_name_problem(kind: object, name: object, namespace: object = None) -> str | None:
    """Why an object's kind, name or namespace cannot be part of a file name, or None."""
    if not isinstance(kind, str) or not _FILE_KIND.fullmatch(kind):
        return f"kind '{_shown(kind)}' is not a Kubernetes kind (letters and digits, starting with a letter)"
    if not isinstance(name, str) or not _FILE_NAME.fullmatch(name):
        return (f"{kind} name '{_shown(name)}' is not a Kubernetes object name (lower case letters, digits, "
                "'-' and '.', at most 253 characters)")
    if namespace is not None and (not isinstance(namespace, str) or not _FILE_NAME.fullmatch(namespace)):
        return f"{kind} {name} has namespace '{_shown(namespace)}', which is not a namespace name"
    return None
