"""The generator of exactly the environment's Ray version, one process kept up for every request, answers cached;
and what users see (`krc autoscaler`, `krc lint`, `krc diff`) when it is there and when it is not."""
from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from process_support import has_ended, wait_until_ended

from compiler import pipeline
from compiler.autoscaler import Batch, autoscaler_views, end_idle_generators
from compiler.cli import main
from compiler.documents.yamlio import load
from compiler.native import helper_process, shared_helper
from compiler.project.paths import Project

REAL_ENVS = Path(os.environ["KRC_RAY_ENVS"])


def _krc(project: Project, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--project", str(project.root), *args])
    return result.exit_code, result.stdout, result.stderr


def _counting_envs(tmp_path: Path, version: str, real: str = "2.58.0") -> Path:
    """A KRC_RAY_ENVS folder whose `version` runs the real generator of `real` and logs every start, every
    request (each is one line on its stdin) and the generator's process id."""
    envs = tmp_path / "ray-envs"
    python = envs / version / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f"#!/bin/sh\necho start >> {envs / 'starts.log'}\ntee -a {envs / 'requests.log'} | "
                      f"/bin/sh -c 'echo $$ >> \"$1\"; shift; exec \"$@\"' sh {envs / 'pids.log'} "
                      f'{REAL_ENVS / real / "bin" / "python"} "$@"\n', encoding="utf-8")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    return envs


def _starts(envs: Path, log_name: str = "starts.log") -> int:
    log = envs / log_name
    return len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0


def _requests(envs: Path) -> int:
    return _starts(envs, "requests.log")


def _logged(envs: Path, want: tuple[int, int]) -> tuple[int, int]:
    """(starts, requests) once the logs say `want`, or as they stand after 10 s: tee may append a request to its
    log after the generator, which it fed first, has answered it."""
    deadline = time.monotonic() + 10
    while (got := (_starts(envs), _requests(envs))) != want and time.monotonic() < deadline:
        time.sleep(0.02)
    return got


def _documents(project: Project, name: str) -> tuple[dict, ...]:
    validated = pipeline.validate_render(pipeline.compile_environment(project, name))
    return tuple(o.document for o in validated.context.objects)


def test_one_process_for_every_environment_then_none_when_cached(project: Project, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    envs = _counting_envs(tmp_path, "2.58.0")
    monkeypatch.setenv("KRC_RAY_ENVS", str(envs))
    batches = [Batch("2.58.0", _documents(project, "dev")), Batch("2.58.0", _documents(project, "prod-eks-gpu"))]
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))  # compiled in the run's cache, asked in an empty one
    first = autoscaler_views(project.root, batches)
    assert _logged(envs, (1, 1)) == (1, 1)  # both environments, five cluster specs, one request
    assert [len(v.configs) for v in first] == [1, 4]
    assert autoscaler_views(project.root, batches) == first
    assert _requests(envs) == 1  # warm: every answer from the cache
    changed = json.loads(json.dumps(batches[0].documents))
    next(d for d in changed if d["kind"] == "RayCluster")["spec"]["workerGroupSpecs"][0]["maxReplicas"] = 5
    [view] = autoscaler_views(project.root, [Batch("2.58.0", tuple(changed))])
    # the changed cluster's content is a new key, asked of the same generator process (still up)
    assert _logged(envs, (1, 2)) == (1, 2)
    [config] = view.configs.values()
    assert config.node_type("cpu") is not None and config.node_type("cpu").max_workers == 5


def test_another_versions_generator_is_never_used(project: Project, tmp_path: Path, private_cache: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # 2.57.0's folder holds 2.58.0's Ray: krc notices and refuses rather than answer with the wrong generator
    # (private_cache holds only 2.58.0's answers: 2.57.0 must be asked)
    monkeypatch.setenv("KRC_RAY_ENVS", str(_counting_envs(tmp_path, "2.57.0")))
    environment = project.environment_file("base")
    environment.write_text(environment.read_text(encoding="utf-8").replace("'2.58.0'", "'2.57.0'"), encoding="utf-8")
    code, _, err = _krc(project, "autoscaler", "dev")
    assert code == 2
    assert "runs Ray 2.58.0, not 2.57.0" in err and "make ray-generators" in err


@pytest.mark.usefixtures("project_without_policies")  # no CUE engine run: not about policies
def test_missing_generator_says_how_to_get_it(project: Project) -> None:
    environment = project.environment_file("base")
    environment.write_text(environment.read_text(encoding="utf-8").replace("'2.58.0'", "'2.1.0'"), encoding="utf-8")
    code, _, err = _krc(project, "autoscaler", "dev")
    assert code == 2
    lines = environment.read_text(encoding="utf-8").splitlines()
    line = next(n for n, text in enumerate(lines, 1) if "'2.1.0'" in text)
    assert err.startswith(f"environments/base.yaml:{line}:3: error: ") and "\n   = help: " in err  # with the line
    assert "the autoscaler config generator of Ray 2.1.0 is not installed" in err and "make ray-generators" in err
    # lint reports it as an error finding: a CI run without the generator must not pass as checked
    code, out, _ = _krc(project, "lint", "dev")
    assert code == 1
    assert "the autoscaler's view was not checked" in out and "[autoscaler/generator]" in out
    # render never needs it
    assert _krc(project, "render", "dev")[0] == 0
    assert _krc(project, "autoscaler", "--ray-versions")[1] == "2.1.0\n"


def test_a_ray_version_that_is_not_a_release_never_reaches_a_path_or_pip(project: Project) -> None:
    environment = project.environment_file("base")
    environment.write_text(environment.read_text(encoding="utf-8").replace("'2.58.0'", "'../../x'"),
                           encoding="utf-8")
    code, _, err = _krc(project, "autoscaler", "dev")
    assert code == 2 and "is not a Ray release version" in err
    assert _krc(project, "autoscaler", "--ray-versions")[1] == ""


def test_node_types_as_a_table_and_as_json(project: Project) -> None:
    code, out, _ = _krc(project, "autoscaler", "dev")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "== dev (autoscaler config of Ray 2.58.0)"
    assert lines[1] == "RayCluster/ray-demo/ray-cpu-demo: autoscaled, idle timeout 60s, max workers 2"
    assert lines[2].split() == ["NODE", "TYPE", "MIN", "MAX", "CPU", "GPU", "MEMORY", "CUSTOM", "IDLE", "POD", "CPU",
                                "POD", "GPU", "POD", "MEMORY"]
    assert lines[3].split() == ["headgroup", "0", "0", "0", "0", "2Gi", "-", "-", "1", "0", "2Gi"]
    assert lines[4].split() == ["cpu", "0", "2", "1", "0", "2Gi", "-", "60s", "1", "0", "2Gi"]
    assert "differs: headgroup: CPU: Ray 0 from rayStartParams num-cpus '0', Kubernetes 1 per Pod" in out
    code, out, _ = _krc(project, "autoscaler", "prod-eks-gpu", "--format", "json")
    data = json.loads(out)
    [env] = data["environments"]
    assert env["rayVersion"] == "2.58.0" and len(env["clusters"]) == 4
    train = next(c for c in env["clusters"] if c["cluster"] == "RayCluster/ray-prod/ray-gpu-train")
    assert train["autoscaled"] is True and train["idleTimeoutMinutes"] == 5.0
    gpu = next(n for n in train["nodeTypes"] if n["name"] == "gpu-a10g-x4")
    assert gpu["resources"]["GPU"] == 4 and gpu["maxWorkers"] == 2 and gpu["rayAtMaxScale"]["gpu"] == 8
    assert _krc(project, "autoscaler", "prod-eks-gpu", "--format", "json")[1] == out  # deterministic
    code, out, _ = _krc(project, "autoscaler", "prod-eks-gpu", "--cluster", "summarizer")
    assert code == 0 and [line for line in out.splitlines() if line.startswith("Ray")] == [
        "RayService/ray-prod/summarizer spec.rayClusterConfig: autoscaled, idle timeout 300s, max workers 4"]
    code, _, err = _krc(project, "autoscaler", "dev", "--cluster", "nope")
    assert code == 2 and "no RayCluster, RayJob, RayService or RayCronJob named 'nope' in dev" in err


@pytest.mark.usefixtures("project_without_policies")  # no CUE engine run: not about policies
def test_review_shows_rays_view_beside_kubernetes(project: Project) -> None:
    environment = project.environment_file("dev")
    text = environment.read_text(encoding="utf-8")
    environment.write_text(text.replace("        maxReplicas: 2\n", "        maxReplicas: 3\n"), encoding="utf-8")
    code, out, _ = _krc(project, "diff", "dev")
    assert code == 1
    assert ("Ray's view at max scale (autoscaler config of Ray 2.58.0): CPU 2 -> 3, GPU 0, memory 6Gi -> 8Gi; "
            "Kubernetes' (after): CPU 4, GPU 0, memory 8Gi") in out
    assert "differs: RayCluster/ray-demo/ray-cpu-demo headgroup: CPU: Ray 0 from rayStartParams num-cpus '0'" in out
    code, out, _ = _krc(project, "diff", "dev", "--format", "markdown")
    assert "Ray's view at max scale (autoscaler config of Ray 2.58.0): CPU 2 -> 3, GPU 0, memory 6Gi -> 8Gi;" in out
    assert "- differs: RayCluster/ray-demo/ray-cpu-demo headgroup: CPU: Ray 0 from rayStartParams num-cpus" in out
    code, out, _ = _krc(project, "diff", "dev", "--format", "json")
    ray_view = json.loads(out)["environments"][0]["capacity"]["rayView"]
    assert ray_view["ray"]["cpu"] == 3 and ray_view["kubernetes"]["cpu"] == "4" and ray_view["unavailable"] is None
    assert ray_view["rayBefore"]["cpu"] == 2  # golden's stored objects through the same generator


@pytest.mark.usefixtures("project_without_policies")  # no CUE engine run: not about policies
def test_lint_of_an_environment_reads_the_environment_file_against_the_generator(project: Project) -> None:
    environment = project.environment_file("dev")
    text = environment.read_text(encoding="utf-8")
    text = text.replace("      version: v2\n", "      version: v1\n")
    text = text.replace("        maxReplicas: 2\n", "        maxReplicas: 2\n        idleTimeoutSeconds: 600\n")
    environment.write_text(text, encoding="utf-8")
    code, out, _ = _krc(project, "lint", "dev")
    assert code == 0  # warnings only
    finding = next(line for line in out.splitlines() if "[autoscaler/idle-timeout-ignored]" in line)
    lines = environment.read_text(encoding="utf-8").splitlines()
    line = int(finding.split(":")[1])
    assert lines[line - 1].strip() == "idleTimeoutSeconds: 600"
    assert "gives group 'cpu' no idle timeout of its own, so its workers idle out after 60 s" in finding
    assert load(environment.read_text(encoding="utf-8"), "dev")["clusters"][0]["autoscaling"]["version"] == "v1"


def test_each_cluster_gets_its_own_warnings_whatever_the_generator_answered_before(
        project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Ray warns about rayStartParams labels once per process and group name (log_once): the runner clears that
    # memory per cluster, so a cluster's answer does not depend on its batch or on the helper's earlier requests
    [cluster] = [d for d in _documents(project, "dev") if d["kind"] == "RayCluster"]
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))
    clusters = []
    for name in ("one", "two"):
        copy = json.loads(json.dumps(cluster))
        copy["metadata"]["name"] = name
        copy["spec"]["workerGroupSpecs"][0].setdefault("rayStartParams", {})["labels"] = "zone=a"
        clusters.append(copy)
    [both] = autoscaler_views(project.root, [Batch("2.58.0", tuple(clusters))])
    warnings = [config.warnings for config in both.configs.values()]
    assert len(warnings) == 2 and warnings[0] == warnings[1]
    assert any("Ignoring labels: zone=a" in w for w in warnings[0])
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "another-cache"))  # asked again of the same process
    [again] = autoscaler_views(project.root, [Batch("2.58.0", (clusters[1],))])
    assert [config.warnings for config in again.configs.values()] == [warnings[1]]


def test_an_idle_generator_exits_and_the_next_request_starts_another(project: Project, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    envs = _counting_envs(tmp_path, "2.58.0")
    monkeypatch.setenv("KRC_RAY_ENVS", str(envs))
    documents = _documents(project, "dev")
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KRC_HELPER_IDLE_SECONDS", "0.5")
    first = autoscaler_views(project.root, [Batch("2.58.0", documents)])
    # idle past KRC_HELPER_IDLE_SECONDS, the generator exits by itself
    assert wait_until_ended(int((envs / "pids.log").read_text().split()[0]))
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "another-cache"))
    assert autoscaler_views(project.root, [Batch("2.58.0", documents)]) == first
    assert _logged(envs, (2, 2)) == (2, 2)


def test_ending_idle_generators_ends_the_process_kept_up(project: Project, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """What krc lint does before its CUE runs at the end: the generator's memory goes to the engines."""
    pool = helper_process.HelperPool()  # of its own: the test process's generator stays up for the other tests
    monkeypatch.setattr(helper_process, "POOL", pool)
    envs = _counting_envs(tmp_path, "2.58.0")
    monkeypatch.setenv("KRC_RAY_ENVS", str(envs))
    documents = _documents(project, "dev")
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KRC_HELPER_IDLE_SECONDS", "60")  # longer than the default: a caller keeping it on purpose
    try:
        autoscaler_views(project.root, [Batch("2.58.0", documents)])
        pid = int((envs / "pids.log").read_text().split()[0])
        end_idle_generators()
        assert not has_ended(pid)  # kept up for a next request, as the caller asked
        monkeypatch.setenv("KRC_HELPER_IDLE_SECONDS", "2")  # krc's default: no one keeps it
        end_idle_generators()
        assert wait_until_ended(pid, within=10)
    finally:
        pool.close()


def test_a_run_of_several_processes_shares_one_generator_answering_as_its_own(
        project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where a run compiles in several processes, its generator listens in the run's folder (shared_helper): the
    answers are the ones a generator of the process's own gives, and krc lint's end of the generators ends it."""
    pool = helper_process.HelperPool()  # of its own: the test process's generator stays up for the other tests
    monkeypatch.setattr(helper_process, "POOL", pool)
    envs = _counting_envs(tmp_path, "2.58.0")
    monkeypatch.setenv("KRC_RAY_ENVS", str(envs))
    batches = [Batch("2.58.0", _documents(project, "dev")), Batch("2.58.0", _documents(project, "prod-eks-gpu"))]
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))
    own = autoscaler_views(project.root, batches)
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    monkeypatch.setenv("KRC_ENGINE_SOCKET", str(run / "engine.sock"))
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "another-cache"))
    try:
        assert autoscaler_views(project.root, batches) == own
        assert (run / "ray-2.58.0.sock").is_socket() and _starts(envs) == 2
        pid = int((envs / "pids.log").read_text().split()[-1])
        monkeypatch.setenv("KRC_HELPER_IDLE_SECONDS", "2")  # krc's default (the test session keeps its own up)
        end_idle_generators()
        assert wait_until_ended(pid, within=10)
    finally:
        shared_helper.end(lambda _name: True)
        pool.close()
