"""The CRDs of the charts some environments pin, sent to the engine to compile before anything asks for them.

Compiling a chart's CRDs for the API server's validation is what a command compiling a few environments waits
for last (charts/crds_ahead.py), so they are sent as soon as a command knows which environments will compile:
from the command line while krc still loads (engine_ahead), when the command's context is made (Context.of), or
when it finds the cache lacking a few entries (charts_ahead). Only the pin is read of each environment (its
`operator` settings through its layers), not the whole environment.
"""
from __future__ import annotations

from collections.abc import Sequence

from ..charts import crds_ahead, vendored
from ..diagnostics.problems import KrcError
from ..environment.model import merged_settings
from ..project.paths import Project

_PIN = frozenset({"operator"})  # where an environment pins its chart


def send_pinned_crds(project: Project, names: Sequence[str]) -> None:
    """The CRDs of the charts `names` pin, sent to the engine to compile (crds_ahead sends each CRD once per
    process; a chart is read once per process). An environment whose pin does not read is left to its compile,
    which reports why."""
    for name in names:
        try:
            settings, _ = merged_settings(project, name, _PIN)
            pin = (settings.get("operator") or {}).get("chart") or {}
            chart, version = str(pin.get("name")), str(pin.get("version"))
            if vendored.chart_pin_problem(chart, version) is None:
                crds_ahead.send(vendored.load_vendored_chart(project.vendor_dir, chart, version).crds)
        except (KrcError, OSError, AttributeError):
            continue
