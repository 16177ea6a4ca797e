"""`make bench` runs every bench/bench_*.py; each must at least import against the code as it is (a name it uses
that krc no longer has fails here, not at the next benchmark run)."""
from __future__ import annotations

import importlib.util
import os
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


def test_a_measured_run_counts_the_engines_cpu_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """bench_scale.measure: the tree's CPU, and the part of it spent in processes named like the engine (versus.py's
    drift-cancelling ratio rests on it)."""
    monkeypatch.syspath_prepend(str(BENCH))
    import bench_scale

    busy = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"
    engine = tmp_path / "krc-engine"  # a stand-in named as the engine is: only the command line is read
    engine.symlink_to(sys.executable)
    parent = (f"import subprocess, sys\nsubprocess.run([{str(engine)!r}, '-c', {busy!r}], check=True)\n{busy}")
    run = bench_scale.measure([sys.executable, "-c", parent], tmp_path, dict(os.environ))
    assert run.code == 0
    assert 0.15 < run.engine_cpu < 0.5  # the child's 0.3 s, as last sampled
    assert run.cpu - run.engine_cpu > 0.2  # the parent's own


def test_a_measured_run_counts_its_childrens_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """bench_scale.measure's peak is the tree's: a grandchild started after the command holds 150 MB for a while,
    and the peak has it (the sampler learns each process's parent once, when its pid first appears)."""
    monkeypatch.syspath_prepend(str(BENCH))
    import bench_scale

    holder = "import time\nblock = bytearray(150 * 2**20)\ntime.sleep(0.5)\n"
    middle = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {holder!r}], check=True)\n"
    parent = ("import subprocess, sys, time\ntime.sleep(0.1)\n"
              f"subprocess.run([sys.executable, '-c', {middle!r}], check=True)\n")
    run = bench_scale.measure([sys.executable, "-c", parent], tmp_path, dict(os.environ))
    assert run.code == 0
    assert run.peak_mb > 150


def test_the_host_loop_is_a_cpu_time(monkeypatch: pytest.MonkeyPatch):
    """timing.host_loop_seconds: the fixed loop's CPU seconds, as the loop's own interpreter measured them."""
    monkeypatch.syspath_prepend(str(BENCH))
    import timing

    seconds = timing.host_loop_seconds()
    assert 0.01 < seconds < 60


def _mounts(tmp_path: Path, *lines: str) -> str:
    path = tmp_path / "mountinfo"
    path.write_text("".join(f"{line}\n" for line in lines))
    return str(path)


def test_the_file_system_without_a_journal_is_told_by_the_mount_holding_the_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """timing.unjournaled_ext4: the longest mount point above the folder decides (not one that merely starts
    with the same letters), and an ext4 device jbd2 lists has a journal."""
    monkeypatch.syspath_prepend(str(BENCH))
    import timing

    mounts = _mounts(tmp_path, "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard",
                     "30 27 0:25 / /dev/shm rw,relatime - tmpfs tmpfs rw",
                     "31 27 254:16 / /da rw,relatime - ext4 /dev/vdb rw")
    journals = tmp_path / "jbd2"
    journals.mkdir()
    assert timing.unjournaled_ext4(Path("/data/project"), mounts, str(journals))
    assert not timing.unjournaled_ext4(Path("/dev/shm/project"), mounts, str(journals))
    (journals / "vda-8").mkdir()
    assert not timing.unjournaled_ext4(Path("/data/project"), mounts, str(journals))
    assert timing.unjournaled_ext4(Path("/da/project"), mounts, str(journals))
    assert not timing.unjournaled_ext4(Path("/da/project"), str(tmp_path / "absent"), str(journals))  # not Linux


def test_removals_are_waited_out_only_where_the_file_system_holds_them(monkeypatch: pytest.MonkeyPatch):
    """timing.settle_removals writes everything back and sleeps until a minute after the removals; nothing of the
    kind with nothing removed or on a file system that does not hold removed inodes."""
    monkeypatch.syspath_prepend(str(BENCH))
    import timing

    calls: list[tuple[str, float]] = []
    monkeypatch.setattr(timing.os, "sync", lambda: calls.append(("sync", 0.0)))
    monkeypatch.setattr(timing.time, "sleep", lambda seconds: calls.append(("sleep", seconds)))
    holds = {"answer": True}
    monkeypatch.setattr(timing, "unjournaled_ext4", lambda folder: holds["answer"])
    now = timing.time.monotonic()
    timing.settle_removals(BENCH, now - 20)
    assert [c[0] for c in calls] == ["sync", "sleep"] and 40 < calls[1][1] <= timing._REUSE_WAIT - 20
    calls.clear()
    timing.settle_removals(BENCH, now - 2 * timing._REUSE_WAIT)
    assert calls == [("sync", 0.0), ("sleep", 0.0)]
    calls.clear()
    timing.settle_removals(BENCH, None)
    holds["answer"] = False
    timing.settle_removals(BENCH, now)
    assert calls == []
