"""What each KubeRay operator version knows: its feature gates and their built-in defaults.

The chart's values.yaml `featureGates` list overrides these defaults; gates the list leaves out keep the
operator binary's default (every alpha gate is off). Source: the operator's features.go at each tag.
"""
from __future__ import annotations

from typing import Any

from .versions import parse_version

# gate name -> default in the operator binary, per operator minor version
_GATES_1_5 = {
    "RayClusterStatusConditions": True,
    "RayJobDeletionPolicy": False,
    "RayMultiHostIndexing": False,
    "RayServiceIncrementalUpgrade": False,
}
_GATES_1_6 = {
    "RayClusterStatusConditions": True,
    "RayJobDeletionPolicy": True,
    "RayMultiHostIndexing": True,
    "RayServiceIncrementalUpgrade": False,
    "RayCronJob": False,
    "AsyncJobInfoQuery": False,
}
_GATES_1_7 = {
    "RayClusterStatusConditions": True,
    "RayJobDeletionPolicy": True,
    "RayMultiHostIndexing": True,
    "RayServiceIncrementalUpgrade": True,
    "RayCronJob": False,
    "SidecarSubmitterRestart": False,
    "RayClusterNetworkPolicy": False,
    "GCSFaultToleranceEmbeddedStorage": False,
    "RayClusterMTLS": False,
    "RayClusterHistoryServer": False,
    "KubernetesWAS": False,
}
_GATES_BY_MINOR: dict[tuple[int, ...], dict[str, bool]] = {(1, 5): _GATES_1_5, (1, 6): _GATES_1_6, (1, 7): _GATES_1_7}

def known_gates(operator_version: str) -> dict[str, bool]:
    """Every gate the operator version accepts, with the binary's default; newest table for later versions."""
    parsed = parse_version(operator_version) or (1, 7, 0)
    minor = parsed[:2]
    if minor in _GATES_BY_MINOR:
        return dict(_GATES_BY_MINOR[minor])
    older = [m for m in _GATES_BY_MINOR if m <= minor]
    return dict(_GATES_BY_MINOR[max(older)] if older else _GATES_1_5)


def chart_default_gates(operator_version: str, chart_values: dict[str, Any]) -> dict[str, bool]:
    """The gates an install of the chart turns on or off when its featureGates value is left alone."""
    gates = known_gates(operator_version)
    for entry in chart_values.get("featureGates") or []:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            gates[entry["name"]] = entry.get("enabled") is True
    return gates
