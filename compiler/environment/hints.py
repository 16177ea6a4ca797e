"""The fix for a value the schema rejects, said in the environment file's terms (`write memory: 32Gi`).

Quantities get their own words: they are text with a unit, not numbers, and the units people type from habit
(GB, MB, "4 cores") are not Kubernetes units.
"""
from __future__ import annotations

import json
import re
from typing import Any

# Units people write and what Kubernetes calls them: (decimal, binary)
_UNIT_WORDS = {
    "kb": ("k", "Ki"), "mb": ("M", "Mi"), "gb": ("G", "Gi"), "tb": ("T", "Ti"),
    "kib": ("k", "Ki"), "mib": ("M", "Mi"), "gib": ("G", "Gi"), "tib": ("T", "Ti"),
    "ki": ("k", "Ki"), "mi": ("M", "Mi"), "gi": ("G", "Gi"), "ti": ("T", "Ti"), "g": ("G", "Gi"), "m": ("M", "Mi"),
}
_POWERS = {"k": "10^3", "M": "10^6", "G": "10^9", "T": "10^12"}
_CORE_WORDS = ("core", "cores", "cpu", "cpus", "vcpu", "vcpus")
_NUMBER_WITH_UNIT = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*$")
QUANTITY_FORMS = "a number with an optional unit: 0.5, 4, 500m (millicores), 512Mi, 32Gi"


def shown(value: Any) -> str:
    """A value as YAML users wrote it (JSON is close enough), cut short: headlines stay one readable line."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def bad_quantity(key: str, value: Any) -> tuple[str, str]:
    """(statement, fix) for a value that is not a Kubernetes quantity."""
    statement = f"{key}: {shown(value)} is not a Kubernetes quantity"
    match = _NUMBER_WITH_UNIT.match(str(value)) if isinstance(value, str) else None
    if match:
        number, unit = match.groups()
        lowered = unit.lower()
        if lowered in _CORE_WORDS:
            return statement, f"CPU is counted in cores without a unit: write {key}: {number} (or {key}: " \
                              f"{int(float(number) * 1000)}m in millicores)"
        if lowered in _UNIT_WORDS and unit not in ("m", "k", "M", "G", "T", "Ki", "Mi", "Gi", "Ti"):
            decimal, binary = _UNIT_WORDS[lowered]
            return statement, (f"Kubernetes writes {unit} as {decimal} ({_POWERS[decimal]} bytes) or {binary} "
                               f"(2^{10 * (list(_POWERS).index(decimal) + 1)} bytes): write {key}: {number}{binary} "
                               f"or {key}: {number}{decimal}")
        if " " in str(value).strip():
            return statement, f"remove the space: {key}: {number}{unit}"
    if isinstance(value, (int, float)) and value < 0:
        return f"{key}: {value} is negative", f"write a positive {QUANTITY_FORMS}"
    return statement, f"write {QUANTITY_FORMS}"


def quoted_number(key: str, value: str, wanted: str) -> tuple[str, str] | None:
    """`maxReplicas: '2'`: the quotes make it text. None when the text is no number."""
    try:
        number = int(value) if wanted == "integer" else float(value)
    except ValueError:
        return None
    return (f"{key}: {shown(value)} is text because of the quotes, not a number",
            f"remove the quotes: {key}: {number}")


def unquoted_text(key: str, value: Any) -> tuple[str, str]:
    """`version: 1.10` is the number 1.1 to YAML; the field wants text."""
    return (f"{key}: {value!r} is read as a number, but this field is text",
            f"quote it: {key}: '{value}'")


# keys that are resource amounts of a group (and of a Pod), not node labels
_RESOURCE_KEYS = frozenset({"cpu", "memory", "gpu", "gpus", "nvidia.com/gpu", "amd.com/gpu", "ephemeral-storage"})


def resource_under_node_selector(path: tuple[Any, ...], key: str, value: Any) -> tuple[str, str] | None:
    """`nodeSelector: {gpu: 1}`: a resource amount indented one level too deep. Quoting it (the usual fix for a
    number where text is wanted) would make it a node label no node carries and leave the group without the
    resource, so the fix moves it instead. None when the value is not such an amount."""
    if len(path) < 2 or path[-2] != "nodeSelector" or str(key).lower() not in _RESOURCE_KEYS:
        return None
    own = "gpu" if "gpu" in str(key).lower() else str(key).lower()
    return (f"{key}: {value} under nodeSelector is a node label, not a resource amount",
            f"move {own}: {value} out of nodeSelector to the group itself, beside cpu: and memory: (quoted under "
            "nodeSelector it would select nodes labelled " + f"{key}={value}, which no node is, and give no {own})")
