"""How krc scales with the number of environments, against the floor and Kapitan, in the same run.

For each N (default 1, 10, 100; `--large` adds 500) it builds a synthetic project of N prod-like environments
(bench/synthetic.py) with its own empty cache folder, and times, as fresh processes:

  krc render cold (empty cache), render warm (nothing changed), render / check / diff with one environment changed
  (a new change before each; the median of three such runs), render with 8 changed (N >= 8),
  lint and policy cold (empty cache), lint warm, lint of one environment warm, lint of all with one changed (the
  median of three), policy warm, and argocd generate of one environment, its first request (cold) and a later one
  (warm), and last a render after a template edit that changes every environment's output;
  the floor (bench/floor.py: gojsonnet on the same templates + PyYAML dump + the same writes, one process);
  Kapitan (bench/kapitan.py: its own virtual environment; the same objects, values file and chart objects by the
  same Helm) in its default setup and with --use-go-jsonnet, N <= 100 unless --large.

Each figure is wall seconds, CPU seconds (user + sys of the whole process tree) and peak memory (the sum of the
resident sets of the process and its children, sampled every 20 ms). Ratios are printed per N, and beside each N
the host loop: the CPU seconds of a fixed Python loop in a fresh interpreter (timing.host_loop_seconds), which
moves only with the host's speed (on a shared machine, by half within minutes): read the figures against it.
Run from the repository root: `make bench` (N up to 100) or `.venv/bin/python bench/bench_scale.py --large`.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import kapitan  # bench/kapitan.py, beside this script
import synthetic  # bench/synthetic.py
import timing  # bench/timing.py
import yaml

ROOT = Path(__file__).resolve().parents[1]
# Kapitan and the floor run the real helm command, built from the engine's module (make helm-cli): the Helm krc's
# engine embeds. Its Go runtime gets the settings a short-lived Helm runs best with.
HELM_CLI = ROOT / "engine" / "bin" / "helm"
HELM_GO_RUNTIME = {"GOGC": "off", "GOMEMLIMIT": "512MiB"}
sys.path.insert(0, str(ROOT))
os.environ.setdefault("KRC_CHART_REPOSITORY", (ROOT.parent / "shared" / "kuberay" / "charts").resolve().as_uri())

from compiler.pipeline import compile_environment  # noqa: E402
from compiler.project.paths import Project  # noqa: E402
from compiler.render.templates import template_context, template_request  # noqa: E402

KRC = str(Path(sys.executable).with_name("krc"))


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float
    peak_mb: float
    code: int
    # CPU seconds of the krc engine processes of the tree, as last sampled (a process's last 20 ms may be missed);
    # the rest of `cpu` is krc's Python and its helpers
    engine_cpu: float = 0.0

    def __str__(self) -> str:
        return f"{self.wall:7.2f} s wall {self.cpu:7.2f} s cpu {self.peak_mb:6.0f} MB"


ENGINE_BINARY = b"krc-engine"  # the engine's program name (engine/bin/krc-engine); others name its socket folder


class _ProcessTree:
    """Resident bytes of a measured command's processes (`root` and its descendants), sampled from /proc every 20 ms
    while the command runs on the same two cores: so the sampler reads a process's status once to learn its parent
    (again only when its pid left /proc and came back, a new process), and only the tree's own processes each time.
    Reading every process's status, as each sample once did, cost 2.3 ms of CPU per sample here, a tenth of a core
    taken from the command it measured (a one-environment render measured 0.1 s slower under it).

    A child caught between fork and exec (the same command line as its parent: subprocess starting Helm or Ray's
    generator) shares its parent's pages (vfork: the very same memory), so it is not counted again: sampled every
    20 ms, such a child added a whole worker's 110 MB to a peak now and then. Each engine process's CPU seconds so
    far are kept in `engine_cpu`."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.parents: dict[int, int] = {}  # every pid seen in /proc, while it stays there
        self.engine_cpu: dict[int, float] = {}
        self.ticks = os.sysconf("SC_CLK_TCK")
        self.page = os.sysconf("SC_PAGE_SIZE")

    def rss(self) -> int:
        listed = {int(entry) for entry in os.listdir("/proc") if entry.isdigit()}
        for gone in self.parents.keys() - listed:
            del self.parents[gone]
        for pid in listed - self.parents.keys():
            fields = _status_fields(pid)
            if fields:
                self.parents[pid] = int(fields[1])
        members, frontier = {self.root}, [self.root]
        children: dict[int, list[int]] = {}
        for pid, parent in self.parents.items():
            children.setdefault(parent, []).append(pid)
        while frontier:
            found = [pid for pid in children.get(frontier.pop(), ()) if pid not in members]
            members.update(found)
            frontier.extend(found)
        total = 0
        commands = {pid: _command_line(pid) for pid in members}
        for pid in members:
            fields = _status_fields(pid)
            if not fields:
                continue
            command = commands[pid]
            if os.path.basename(command.split(b"\0", 1)[0]) == ENGINE_BINARY:
                self.engine_cpu[pid] = (int(fields[11]) + int(fields[12])) / self.ticks  # utime + stime
            if pid == self.root or command != commands.get(self.parents.get(pid, -1)):
                total += int(fields[21]) * self.page
        return total


def _status_fields(pid: int) -> list[bytes]:
    """The fields of /proc/<pid>/stat after the command name (state, ppid, ...), or [] once it is gone."""
    try:
        handle = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
        try:
            text = os.read(handle, 4096)
        finally:
            os.close(handle)
        return text.rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return []


def _command_line(pid: int) -> bytes:
    try:
        handle = os.open(f"/proc/{pid}/cmdline", os.O_RDONLY)
        try:
            return os.read(handle, 65536)
        finally:
            os.close(handle)
    except OSError:
        return b""


def measure(command: list[str], cwd: Path, env: dict[str, str], check: bool = True) -> Run:
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = [0]
    tree = _ProcessTree(process.pid)
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], tree.rss())
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    stderr = process.stderr.read().decode("utf-8", "replace") if process.stderr else ""
    process.returncode = os.waitstatus_to_exitcode(status)
    if check and process.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{stderr[-3000:]}")
    return Run(wall, usage.ru_utime + usage.ru_stime, peak[0] / 1e6, process.returncode, sum(tree.engine_cpu.values()))


# From this many environments on, a run creates (and Kapitan removes) enough files for timing.settle_removals
MANY_FILES_AT = 50
FEW = 8  # environments a "few changed" figure changes: fewer than repay a worker process (RunOptions.workers_for)


def krc_figures(project: Path, caches: Path, n: int, lint: bool = True) -> dict[str, Run]:
    """Each cold run starts from an empty cache folder of its own under `caches`: nothing is deleted between timed
    runs (on a file system without a journal, ext4 skips recently deleted inodes when it allocates new ones, and
    a run creating thousands of files right after thousands were deleted paid for it: docs/performance.md)."""
    env = {**os.environ, "KRC_CACHE_DIR": str(caches / "render")}
    if (ROOT / ".venv-ray").is_dir():  # lint runs Ray's autoscaler generator, as the repository does
        env.setdefault("KRC_RAY_ENVS", str(ROOT / ".venv-ray"))
    one = synthetic.environment_name(n // 2)
    runs: dict[str, Run] = {}
    runs["render cold"] = measure([KRC, "render"], project, env)
    runs["render warm"] = measure([KRC, "render"], project, env)
    measure([KRC, "golden"], project, env)
    measure([KRC, "diff"], project, env)  # as after earlier pull requests: Ray's view of each cluster is cached
    for revision, command in enumerate(("render", "check", "diff"), start=1):
        runs[f"{command} one changed"] = one_changed(project, n, command, env, revision)
    if n >= FEW:  # a pull request touching a few environments, spread over the project (and over render's jobs)
        for i in range(FEW):
            synthetic.touch_one(project, i * n // FEW, 5)
        runs[f"render {FEW} changed"] = measure([KRC, "render"], project, env)
    if not lint:
        runs.update(generate_figures(project, env, one))
        runs["render template edited"] = template_edited(project, {**env, "KRC_CACHE_DIR": str(caches / "render")})
        return runs
    env["KRC_CACHE_DIR"] = str(caches / "lint")
    runs["lint cold"] = measure([KRC, "lint"], project, env)
    runs["lint warm"] = measure([KRC, "lint"], project, env)
    runs["lint one env warm"] = measure([KRC, "lint", one], project, env)
    runs["lint one changed"] = one_changed(project, n, "lint", env, 4)
    env["KRC_CACHE_DIR"] = str(caches / "policy")
    runs["policy cold"] = measure([KRC, "policy"], project, env)
    runs["policy warm"] = measure([KRC, "policy"], project, env)
    runs.update(generate_figures(project, env, one))
    runs["render template edited"] = template_edited(project, {**env, "KRC_CACHE_DIR": str(caches / "render")})
    return runs


def one_changed(project: Path, n: int, command: str, env: dict[str, str], revision: int) -> Run:
    """`command` after one environment changed (what a one-environment pull request does), three times, each after
    a change of its own: the run of median wall time. A single run of under a second moved by a fifth from one
    minute to the next on a shared machine, and a target of 0.6 s is read off this figure."""
    runs = []
    for attempt in range(3):
        synthetic.touch_one(project, n // 2, revision * 10 + attempt)
        runs.append(measure([KRC, command], project, env))
    return sorted(runs, key=lambda run: run.wall)[1]


def template_edited(project: Path, env: dict[str, str]) -> Run:
    """A template edit that reaches every environment's output (an annotation on each Namespace), rendered over
    the rendered/ of the runs before: every environment compiles again (the chart's Helm answers are cached) and
    every folder is replaced. Last, since it replaces thousands of files (see krc_figures); the template is put
    back afterwards, so the floor and Kapitan do the same work as the cold render."""
    core = project / "templates" / "objects" / "core.jsonnet"
    original = core.read_text(encoding="utf-8")
    edited = original.replace("'argocd.argoproj.io/sync-wave': '-20',",
                              "'argocd.argoproj.io/sync-wave': '-20',\n  'example.com/edited': 'true',", 1)
    if edited == original:
        raise SystemExit(f"{core}: the line bench_scale.template_edited changes is gone; update it")
    core.write_text(edited, encoding="utf-8")
    try:
        return measure([KRC, "render"], project, env)
    finally:
        core.write_text(original, encoding="utf-8")


def generate_figures(project: Path, env: dict[str, str], one: str) -> dict[str, Run]:
    """The plugin as a sidecar runs it: its first request for an environment compiles it (the sidecar's cache is
    its own: CI's render never fills it), every later one with unchanged inputs is warm. Both with the default
    parameters (CRDs included) and as the workloads Application asks (crds=exclude, operator=exclude)."""
    command = [KRC, "argocd", "generate", "--environment", one]
    workloads = [*command, "--crds", "exclude", "--operator", "exclude"]
    return {"argocd generate one cold": measure(command, project, env),
            "argocd generate one warm": measure(command, project, env),
            "generate workloads app warm": measure(workloads, project, env)}


def kapitan_project(krc_project: Path, dest: Path) -> Path:
    project = Project(krc_project)
    contexts, own = {}, {}
    for name in project.environment_names():
        render = compile_environment(project, name)
        request = template_request(project, render.environment, render.chart, render.helm_values)
        contexts[name] = {**template_context(render.environment, render.chart), "helmValues": render.helm_values,
                          "helmRelease": {"archive": str(request.archive), "release": request.release,
                                          "namespace": request.namespace, "kube_version": request.kube_version}}
        data = yaml.safe_load(project.environment_file(name).read_text(encoding="utf-8"))
        own[name] = {k: v for k, v in data.items() if k != "extends"}
    helm = HELM_CLI
    return kapitan.build_inventory(krc_project, dest, contexts, own, helm)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--large", action="store_true", help="also N=500 (several minutes)")
    parser.add_argument("--sizes", default="", help="comma-separated N (default 1,10,100[,500])")
    parser.add_argument("--no-kapitan", action="store_true")
    parser.add_argument("--no-lint", action="store_true", help="skip lint and policy (their cold runs take minutes)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else [1, 10, 100] + ([500] if args.large else [])
    kapitan_bin = None if args.no_kapitan else kapitan.install()
    # krc as pip installs it: its modules' bytecode compiled once (a checkout run under PYTHONDONTWRITEBYTECODE,
    # as CI machines and containers often set, would compile every module again in every process it starts)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "compiler")], check=True)
    print(f"cores: {os.cpu_count()}, load average at start: {os.getloadavg()[0]:.1f}, "
          f"host loop {timing.host_loop_seconds():.2f} s (a fixed Python loop's CPU: read each N's figures against it)")
    # Every run writes into folders of its own and nothing is removed until the end: a run creating thousands of
    # files right after thousands were removed is slowed by the file system (krc_figures), whichever tool it is.
    # Two runs still remove thousands: the last of krc_figures (a template edit replaces every rendered folder) and
    # Kapitan (its compile folder); the runs of many environments after them first wait that out
    # (timing.settle_removals), as does the first, after whatever ran before the benchmark.
    removed_at = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="krc-bench-scale-") as tmp:
        for n in sizes:
            project = synthetic.build_project(Path(tmp) / f"n{n}", n)
            many = n >= MANY_FILES_AT
            timing.settle_removals(Path(tmp), removed_at if many else None)
            runs = krc_figures(project, Path(tmp) / f"cache{n}", n, lint=not args.no_lint)
            removed_at = time.monotonic() if many else removed_at
            floor_out = Path(tmp) / f"floor{n}"
            timing.settle_removals(Path(tmp), removed_at if many else None)
            runs["floor"] = measure([sys.executable, str(ROOT / "bench" / "floor.py"), str(project), str(floor_out)],
                                    ROOT, dict(os.environ))
            if kapitan_bin is not None and (n <= 100 or args.large):
                built = kapitan_project(project, Path(tmp) / f"kapitan{n}")
                for label, go in (("kapitan default", False), ("kapitan go-jsonnet", True)):
                    timing.settle_removals(Path(tmp), removed_at if many else None)
                    inventory = Path(shutil.copytree(built, Path(tmp) / f"kapitan{n}-{label.split()[-1]}",
                                                     symlinks=True))  # its own compiled/ folder to write
                    # Kapitan's Helm runs with the Go runtime settings krc's and the floor's run with; its
                    # temporary files (a values file and a folder per Helm input, never removed) stay under tmp
                    scratch = Path(tmp) / f"kapitan{n}-{label.split()[-1]}-tmp"
                    scratch.mkdir()
                    runs[label] = measure(kapitan.compile_command(kapitan_bin, go), inventory,
                                          {**os.environ, **HELM_GO_RUNTIME, "TMPDIR": str(scratch)})
                    removed_at = time.monotonic() if many else removed_at
                    if runs[label].code != 0:  # Kapitan's 1 is a failed compile, not findings
                        raise SystemExit(f"{label} failed to compile (exit {runs[label].code}): run it in "
                                         f"{inventory} to see why (is {HELM_CLI} built? make helm-cli)")
            report(n, runs)


def report(n: int, runs: dict[str, Run]) -> None:
    print(f"\n== N={n} environments (load average {os.getloadavg()[0]:.1f}, host loop "
          f"{timing.host_loop_seconds():.2f} s)")
    for label, run in runs.items():
        print(f"  {label:28} {run}")
    cold, floor = runs["render cold"], runs["floor"]
    print(f"  ratio render cold / floor: {cold.wall / floor.wall:5.2f} wall, {cold.cpu / floor.cpu:5.2f} cpu")
    fastest = min((runs[k] for k in ("kapitan default", "kapitan go-jsonnet") if k in runs), default=None,
                  key=lambda r: r.wall)
    if fastest is not None:
        print(f"  ratio Kapitan (faster setup) / krc render cold: {fastest.wall / cold.wall:5.2f} wall, "
              f"{fastest.cpu / cold.cpu:5.2f} cpu")
    if f"render {FEW} changed" in runs:
        few, one = runs[f"render {FEW} changed"], runs["render one changed"]
        print(f"  ratio render {FEW} changed / one changed: {few.wall / one.wall:5.2f} wall, "
              f"{few.cpu / one.cpu:5.2f} cpu")
    krc_peak = max(r.peak_mb for k, r in runs.items() if "kapitan" not in k and k != "floor")
    print(f"  peak memory, largest of the krc commands: {krc_peak:.0f} MB")


if __name__ == "__main__":
    main()
