"""Writes are all-or-nothing and serialized: kills at every write step, concurrent runs, read-only folders and a
full disk. Kills and concurrency need real processes; the writes run in forked children (the render is compiled
first in this process: the Go Jsonnet runtime must not run in a forked child) or in `krc` subprocesses."""
from __future__ import annotations

import fcntl
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from security_support import replace_in, tree_digest

from compiler import pipeline
from compiler.output import folders, layout
from compiler.project import lock as project_lock
from compiler.project.paths import Project

KRC = Path(sys.executable).with_name("krc")


def _changed_render(project: Project, folder: str = "golden") -> dict[Path, folders.Files]:
    """golden/ (or rendered/) trees for a render that differs from what is there (dev scales to 3)."""
    replace_in(project.environment_file("dev"), "maxReplicas: 2", "maxReplicas: 3")
    renders = pipeline.compile_environments(project, project.environment_names())
    return {project.root / folder / r.environment.name: layout.render_files(r, include_crds=folder == "rendered")
            for r in renders}


def _write_in_child(project: Project, trees: dict[Path, folders.Files], kill_at: int, exchange: bool) -> int:
    """replace_trees in a forked child killed (SIGKILL) just before write step `kill_at`; the wait status."""
    pid = os.fork()
    if pid == 0:  # the child: only the write stage runs here
        try:
            os.environ[folders.KILL_AT_STEP_VARIABLE] = str(kill_at)
            if not exchange:
                folders._LIBC[:] = [None]  # the portable protocol, as on systems without renameat2
            folders.replace_trees(trees, project)
            os._exit(0)
        except BaseException:
            os._exit(5)
    return os.waitpid(pid, 0)[1]


def _debris(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.mark.parametrize(("folder", "exchange"), [("golden", True), ("golden", False), ("rendered", True)],
                         ids=["golden-renameat2-exchange", "golden-move-aside", "rendered-renameat2-exchange"])
def test_a_kill_at_any_write_step_leaves_old_or_new_and_the_next_run_cleans_up(project: Project, folder: str,
                                                                               exchange: bool):
    if folder == "rendered":  # an earlier render is the old state
        pipeline.render_to_disk(project, project.environment_names())
    trees = _changed_render(project, folder)
    if folder == "rendered":
        # rendered/ adds the CRD files (4 MB an environment) and their folder to what golden/ has; one environment
        # tries each of its write steps (the golden variants replace two environments' folders in one run)
        trees = {target: files for target, files in trees.items() if target.name == "dev"}
    old = {target: folders.read_tree(target) for target in trees}
    killed = 0
    for step in range(1, 200):
        status = _write_in_child(project, trees, step, exchange)
        if os.WIFEXITED(status):  # the run got past its last step: every step has been tried
            assert os.WEXITSTATUS(status) == 0
            break
        assert os.WTERMSIG(status) == signal.SIGKILL
        killed += 1
        for target, files in trees.items():
            now = folders.read_tree(target)
            moved_aside = not target.exists() and any(n.startswith(f".{target.name}.old-")
                                                      for n in _debris(target.parent))
            assert now in (old[target], files) or (not exchange and moved_aside), f"step {step}: {target.name}"
        folders.replace_trees(trees, project)  # the next run
        assert _debris(project.root / folder) == [], f"debris after step {step}"
        for target, files in trees.items():
            assert folders.read_tree(target) == files
            shutil.rmtree(target)  # back to the old state for the next step
            for relative, content in old[target].items():
                (target / relative).parent.mkdir(parents=True, exist_ok=True)
                (target / relative).write_bytes(content)
    assert killed >= sum(len(files) for files in trees.values()) + len(trees), "too few steps were tried"


def test_clean_debris_restores_a_folder_moved_aside(tmp_path: Path):
    (tmp_path / ".dev.old-abc123").mkdir()
    (tmp_path / ".dev.old-abc123" / "f").write_text("old")
    (tmp_path / ".dev.new-xyz789").mkdir()
    folders.clean_debris(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dev"]
    assert (tmp_path / "dev" / "f").read_text() == "old"


def _krc(project: Project, *args: str, prefix: tuple[str, ...] = ()) -> subprocess.Popen[str]:
    env = {**os.environ, "KRC_CHART_REPOSITORY": os.environ["KRC_CHART_REPOSITORY"]}
    return subprocess.Popen([*prefix, str(KRC), "--project", str(project.root), *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_concurrent_runs_serialize_and_agree(project_without_policies: Project):
    """Four runs, two of each writing command, twice as many processes as the machine has cores. Without policies/
    (writes are this test's subject; that a policy violation blocks `krc golden` is
    tests/review/test_review_checks.py's), and with the compile cache warm, as after a developer's first run: the
    runs start together and meet at the write lock, instead of compiling and running CUE each."""
    project = project_without_policies
    replace_in(project.environment_file("dev"), "maxReplicas: 2", "maxReplicas: 3")
    renders = pipeline.compile_environments(project, project.environment_names())
    expected = {folder / r.environment.name: layout.render_files(r, include_crds=folder == project.rendered_dir)
                for r in renders for folder in (project.golden_dir, project.rendered_dir)}
    changed = pipeline.check_golden(project, project.environment_names())  # fills the compile cache
    assert [m.environment for m in changed if not m.clean] == ["dev"]
    runs = [_krc(project, "render" if i % 2 else "golden") for i in range(4)]
    results = [(run.wait(timeout=300), run.stderr.read() if run.stderr else "") for run in runs]
    assert [code for code, _ in results] == [0] * 4, results
    for target, files in expected.items():
        assert folders.read_tree(target) == files
    assert _debris(project.golden_dir) == [] and _debris(project.rendered_dir) == []


def _read_only_prefix(folder: Path) -> tuple[str, ...]:
    """A command prefix that runs krc with `folder` mounted read-only (a private mount namespace), as a
    read-only checkout in Argo CD's repo-server is."""
    quoted = str(folder).replace("'", "'\\''")
    return ("unshare", "-m", "sh", "-c",
            f"mount --bind '{quoted}' '{quoted}' && mount -o remount,bind,ro '{quoted}' && exec \"$@\"", "sh")


def test_read_only_golden_exits_2_with_one_line_and_keeps_old_data(project_without_policies: Project):
    project = project_without_policies  # no CUE engine run before the write that fails
    _changed_render(project)
    before = tree_digest(project.golden_dir)
    run = _krc(project, "golden", prefix=_read_only_prefix(project.golden_dir))
    code = run.wait(timeout=120)
    stderr = run.stderr.read() if run.stderr else ""
    assert code == 2, stderr
    # one error line per environment staged beside its folder (each with its help line)
    errors = [line for line in stderr.splitlines() if "error" in line]
    assert 1 <= len(errors) <= 2 and all("Read-only file system" in e for e in errors), stderr
    assert "Traceback" not in stderr
    assert tree_digest(project.golden_dir) == before


def test_argocd_init_on_a_read_only_checkout_with_vendored_charts_writes_nothing(project: Project):
    before = tree_digest(project.root)
    run = _krc(project, "argocd", "init", "--environment", "dev", prefix=_read_only_prefix(project.root))
    code = run.wait(timeout=120)
    stderr = run.stderr.read() if run.stderr else ""
    assert code == 0, stderr
    assert "(cached)" in stderr
    assert tree_digest(project.root) == before


def test_a_full_disk_exits_2_with_one_line_and_keeps_old_data(project: Project):
    """RLIMIT_FSIZE makes the kernel refuse a write past the limit (EFBIG), as a full disk refuses (ENOSPC)."""
    trees = _changed_render(project)
    before = tree_digest(project.golden_dir)
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(reader)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))
        try:
            folders.replace_trees(trees, project)
            os._exit(0)
        except Exception as err:  # noqa: BLE001 - the message goes to the parent
            os.write(writer, str(err).encode())
            os._exit(2 if type(err).__name__ == "KrcError" else 5)
    os.close(writer)
    status = os.waitpid(pid, 0)[1]
    message = os.read(reader, 65536).decode()
    os.close(reader)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 2, message
    assert len(message.splitlines()) == 1 and "File too large" in message and "nothing was changed" in message
    assert tree_digest(project.golden_dir) == before
    assert _debris(project.golden_dir) == []


def _hold_lock(project: Project) -> subprocess.Popen[str]:
    """Another process holding the project's lock, as a krc run does, its pid written in the lock file."""
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(project.root / project_lock.LOCK_FILE)!r}, os.O_RDWR | os.O_CREAT, 0o644)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\nos.ftruncate(fd, 0)\nos.write(fd, f'{os.getpid()}\\n'.encode())\n"
        "print('held', flush=True)\ntime.sleep(120)\n")], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def test_a_held_lock_names_its_holder_and_gives_up_at_the_bound(project_without_policies: Project):
    project = project_without_policies
    holder = _hold_lock(project)
    try:
        env = {**os.environ, "KRC_LOCK_SECONDS": "1"}
        started = time.monotonic()
        done = subprocess.run([str(KRC), "--project", str(project.root), "render"], env=env, text=True,
                              capture_output=True, timeout=60)
        elapsed = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    waiting = [line for line in done.stderr.splitlines() if line.startswith("krc:") and "waiting" in line]
    assert waiting == [f"krc: .krc.lock is held by process {holder.pid}; waiting up to 1 s for it to finish"], \
        done.stderr
    assert any(line.startswith(".krc.lock: error") and f"process {holder.pid}" in line
               for line in done.stderr.splitlines()), done.stderr
    assert "raise KRC_LOCK_SECONDS" in done.stderr
    assert elapsed < 30
    # released by its holder, the lock is taken at once, and the taker's pid replaces the holder's
    with project_lock.project_lock(project):
        assert (project.root / project_lock.LOCK_FILE).read_text() == f"{os.getpid()}\n"


SLOW_JINJA = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: slow\ndata:\n"
              "  x: '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}'\n")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("command", ["render", "golden"])
def test_a_signal_stops_a_run_within_a_second_releasing_the_lock_leaving_no_debris(
        project_without_policies: Project, tmp_path: Path, signum: int, command: str):
    """A template that would run for hours (the bound is 60 s): the signal stops krc at once, whatever it is
    doing, through the exits that release the lock and remove temporary folders."""
    project = project_without_policies
    (project.templates_dir / "objects" / "slow.yaml.j2").write_text(SLOW_JINJA)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    before = {part: tree_digest(project.root / part) for part in ("golden", "rendered")}
    run = subprocess.Popen([str(KRC), "--project", str(project.root), command, "dev"], text=True,
                           env={**os.environ, "TMPDIR": str(temporary)}, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    time.sleep(4)  # well into the template
    assert run.poll() is None, run.communicate()
    sent = time.monotonic()
    run.send_signal(signum)
    _, stderr = run.communicate(timeout=30)
    assert time.monotonic() - sent < 1.5, "krc took too long to stop"
    assert run.returncode == 128 + signum, stderr
    assert "Traceback" not in stderr, stderr
    assert {part: tree_digest(project.root / part) for part in ("golden", "rendered")} == before
    assert all(_debris(folder) == [] for folder in (project.golden_dir, project.rendered_dir) if folder.exists())
    assert list(temporary.iterdir()) == []
    fd = os.open(project.root / project_lock.LOCK_FILE, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: raises BlockingIOError if krc left it held
    finally:
        os.close(fd)
