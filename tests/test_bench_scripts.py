"""`make bench` runs every bench/bench_*.py; each must at least import against the code as it is (a name it uses
that krc no longer has fails here, not at the next benchmark run)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.mark.parametrize("script", sorted(p.name for p in BENCH.glob("*.py")))
def test_the_script_imports(script: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(BENCH))  # the scripts import their helpers (timing, synthetic) from beside them
    spec = importlib.util.spec_from_file_location(f"bench_script_{Path(script).stem}", BENCH / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    if script.startswith("bench_"):
        assert callable(getattr(module, "main", None)), f"{script} has no main()"
