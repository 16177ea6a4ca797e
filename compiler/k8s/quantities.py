"""Kubernetes resource quantities ("500m", "16Gi", "1e3", 4), read as apimachinery's resource.Quantity reads them."""
from __future__ import annotations

import functools
import re
from decimal import Decimal, InvalidOperation
from typing import Any

_SUFFIXES = {
    "Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30, "Ti": Decimal(2) ** 40,
    "Pi": Decimal(2) ** 50, "Ei": Decimal(2) ** 60,
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1), "k": Decimal("1e3"),
    "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"), "P": Decimal("1e15"), "E": Decimal("1e18"),
}
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")


def parse_quantity(value: Any) -> Decimal | None:
    """The quantity as an exact number; None when it is not one (a bool, text that does not parse)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    return _parse_text(str(value).strip())


# A project writes a few dozen distinct quantities ("16Gi", "500m") and the rules read each many times; a Decimal is
# immutable, so one answer per text can be handed to every caller.
@functools.lru_cache(maxsize=4096)
def _parse_text(text: str) -> Decimal | None:
    match = _QUANTITY.fullmatch(text)
    if not match:
        return None
    try:
        return Decimal(match.group(1)) * _SUFFIXES[match.group(2) or ""]
    except InvalidOperation:
        return None
