"""What an environment pins of its operator chart: its own module, because every compile names a pin while only
`krc vendor` downloads (vendor.py) and the plugin's warm answer reads what was vendored (vendored.py).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class ChartPin:
    """What an environment asks for."""

    name: str
    version: str
    repository: str
