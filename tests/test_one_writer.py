"""One process at a time works out a costly cache entry (compiler/cache/one_writer.py), tried with real processes:
a holder keeps the others out until it leaves, a holder stuck past the wait is passed, a folder krc does not trust
gets no lock, and a cold run's processes reading the same chart at once parse its CRDs once."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from project_support import REPO_ROOT

from compiler.cache import CacheKind
from compiler.cache.one_writer import one_at_a_time

KIND = CacheKind("one-writer-test", 1)
KEY = "ab" * 32
CHART = REPO_ROOT / ".." / "shared" / "kuberay" / "charts" / "kuberay-operator-1.7.0.tgz"


def _child(code: str, cache: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "KRC_CACHE_DIR": str(cache)}
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _holder(cache: Path, marks: Path, seconds: float) -> subprocess.Popen[str]:
    """A process that enters for KEY, writes `in` to `marks`, stays `seconds`, then writes `out` and leaves."""
    return _child(f"""
        import time
        from compiler.cache import CacheKind
        from compiler.cache.one_writer import one_at_a_time
        with one_at_a_time(CacheKind("{KIND.name}", {KIND.version}), "{KEY}"):
            open({str(marks)!r}, "a").write(f"in {{time.time()}}\\n")
            time.sleep({seconds})
            open({str(marks)!r}, "a").write(f"out {{time.time()}}\\n")
        """, cache)


def _wait_for(path: Path, text: str, holder: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while text not in (path.read_text() if path.exists() else ""):
        assert holder.poll() is None, holder.communicate()
        assert time.monotonic() < deadline, f"{text!r} never written"
        time.sleep(0.01)


def _mark(marks: Path, name: str) -> float:
    return next(float(line.split()[1]) for line in marks.read_text().splitlines() if line.startswith(name))


def test_a_process_waits_until_the_holder_leaves(tmp_path: Path):
    cache, marks = tmp_path / "cache", tmp_path / "marks"
    holder = _holder(cache, marks, 0.8)
    _wait_for(marks, "in ", holder)
    with one_at_a_time(KIND, KEY, cache):
        entered = time.time()
    assert holder.wait(30) == 0, holder.communicate()
    assert entered >= _mark(marks, "out")


def test_a_holder_stuck_past_the_wait_is_passed(tmp_path: Path):
    cache, marks = tmp_path / "cache", tmp_path / "marks"
    holder = _holder(cache, marks, 30)
    try:
        _wait_for(marks, "in ", holder)
        started = time.monotonic()
        with one_at_a_time(KIND, KEY, cache, wait_seconds=0.3):
            waited = time.monotonic() - started
        assert 0.3 <= waited < 10
        assert "out" not in marks.read_text()  # the holder was still inside
    finally:
        holder.kill()
        holder.communicate()


def test_a_folder_others_may_write_to_gets_no_lock(tmp_path: Path, capsys):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    cache.chmod(0o777)  # anyone may write here: krc neither trusts nor writes it
    with one_at_a_time(KIND, KEY, cache):
        pass
    assert not (cache / KIND.name).exists()
    assert "ignoring the cache" in capsys.readouterr().err


def test_processes_reading_one_chart_at_once_parse_its_crds_once(tmp_path: Path):
    """Each process's parse takes a second here, so both read the chart while the other parses it; without the
    lock each parsed it."""
    cache, parses = tmp_path / "cache", tmp_path / "parses"
    code = f"""
        import os, time
        from compiler.charts import package
        parse = package.parse_crd_documents
        def slow(*args):
            open({str(parses)!r}, "a").write(f"{{os.getpid()}}\\n")
            time.sleep(0.25)
            return parse(*args)
        package.parse_crd_documents = slow
        chart = package.read_chart_bytes(open({str(CHART)!r}, "rb").read(), "kuberay-operator-1.7.0.tgz")
        import hashlib
        print(len(chart.crds), hashlib.sha256("".join(c.canonical for c in chart.crds).encode()).hexdigest())
        """
    readers = [_child(code, cache) for _ in range(2)]
    outputs = [reader.communicate(timeout=120) for reader in readers]
    assert [reader.returncode for reader in readers] == [0, 0], outputs
    assert outputs[0][0] == outputs[1][0] and outputs[0][0].startswith("4 ")  # the same four CRDs, parsed or read
    assert len(set(parses.read_text().split())) == 1  # one process parsed (each of the four files)
