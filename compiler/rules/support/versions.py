"""Operator and Ray versions as rules read them: lenient parsing of tags, PEP 440 specifiers for VERSIONS."""
from __future__ import annotations

import functools
import re

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version as PackagingVersion

Version = tuple[int, ...]


_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")


def parse_version(text: str) -> Version | None:
    """'1.7.0', 'v2.52.0', '2.52.0-py312' -> (1, 7, 0); None when the text does not start like a version."""
    return _parse_version(str(text).strip())


@functools.lru_cache(maxsize=1024)  # rules read the same few rayVersions and image tags for every group
def _parse_version(text: str) -> Version | None:
    match = _VERSION.match(text)
    if not match:
        return None
    return tuple(int(part) for part in match.groups(default="0"))


def version_text(version: Version) -> str:
    return ".".join(str(p) for p in version)


@functools.lru_cache(maxsize=1024)  # asked for every rule of every environment, of a handful of versions
def applies_to(versions: str, operator_version: str) -> bool:
    """`versions` is a PEP 440 specifier such as '>=1.6' ('' for all); a version that does not parse counts as
    matching (the rule runs rather than silently not)."""
    if not versions:
        return True
    parsed = parse_version(operator_version)
    if parsed is None:
        return True
    try:
        return PackagingVersion(version_text(parsed)) in SpecifierSet(versions)
    except InvalidSpecifier:
        raise ValueError(f"bad version spec {versions!r}") from None
