"""KubeRay's own builders behind `krc show ENV --pods`: the real v1.6.2 build (engine/kuberay/v1.6.2, make kuberay)
fed the fixture project's prod-eks-gpu (chart 1.6.2), its objects defaulted by the engine from the chart's CRDs
and the operator configured from the chart's Deployment."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from compiler.cli import main
from compiler.native import binary, kuberay, shared_helper
from compiler.project.paths import Project


def run(project: Project, *args: str):
    return CliRunner().invoke(main, ["--project", str(project.root), *args])


def _groups(found: list, source: str) -> dict:
    [item] = [o for o in found if o["object"] == source]
    [cluster] = item["clusters"]
    return {g["group"]: g for g in cluster["pods"]}, cluster


def test_show_pods_prints_one_pod_per_group_with_its_counts(project: Project):
    result = run(project, "show", "prod-eks-gpu", "--pods", "-o", "json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert {o["kuberayVersion"] for o in found} == {"1.6.2"}
    groups, cluster = _groups(found, "RayCluster/ray-prod/ray-gpu-train")
    assert [(g, p["type"], p["min"], p["max"]) for g, p in groups.items()] == [
        ("headgroup", "head", 1, 1), ("cpu", "worker", 0, 10), ("gpu-a10g", "worker", 0, 8),
        ("gpu-a10g-x4", "worker", 0, 2)]
    head = groups["headgroup"]["pod"]["spec"]["containers"][0]
    # the environment's head.rayStartParams {num-cpus: '0'} reaches KubeRay's generated ray start
    assert "ray start --head" in head["args"][0] and "--num-cpus=0" in head["args"][0]
    worker = groups["gpu-a10g"]["pod"]["spec"]["containers"][0]
    assert "--num-gpus=1" in worker["args"][0]
    assert "--address=ray-gpu-train-head-svc.ray-prod.svc.cluster.local:6379" in worker["args"][0]
    # autoscaling v2: the autoscaler sidecar in the head Pod, restartPolicy Never on every Pod
    assert [c["name"] for c in groups["headgroup"]["pod"]["spec"]["containers"]] == ["ray-head", "autoscaler"]
    assert {p["pod"]["spec"]["restartPolicy"] for p in groups.values()} == {"Never"}
    assert [s["metadata"]["name"] for s in cluster["services"]] == ["ray-gpu-train-head-svc"]
    # a RayJob's cluster and a RayService's (their Services too) come from their controllers' constructors
    job_groups, _ = _groups(found, "RayJob/ray-prod/train-resnet")
    job_env = {e["name"]: e.get("value") for e in job_groups["headgroup"]["pod"]["spec"]["containers"][0]["env"]}
    assert job_env["RAY_USAGE_STATS_EXTRA_TAGS"] == "kuberay_version=v1.6.2;kuberay_crd=RayJob"
    _, serving = _groups(found, "RayService/ray-prod/summarizer")
    names = [s["metadata"]["name"] for s in serving["services"]]
    # the cluster's own head Service, then the RayService's (incremental upgrade on: the serve Service is the
    # cluster's, as BuildServeService names it then)
    assert names == [f"{serving['name']}-head-svc", "summarizer-head-svc", f"{serving['name']}-serve-svc"]
    again = run(project, "show", "prod-eks-gpu", "--pods", "-o", "json")
    assert again.stdout == result.stdout  # deterministic, random name suffixes included


def test_show_pods_yaml_is_manifests_each_named_by_its_cause(project: Project):
    result = run(project, "show", "prod-eks-gpu", "--pods")
    assert result.exit_code == 0, result.output
    documents = list(yaml.safe_load_all(result.stdout))
    assert {d["kind"] for d in documents} == {"Pod", "Service"}
    comments = [line for line in result.stdout.splitlines() if line.startswith("# ")]
    assert len(comments) == len(documents)
    assert ("# RayCluster/ray-prod/ray-gpu-train -> RayCluster ray-gpu-train: worker group 'cpu', Pods: 0 at min, "
            "10 at max, 0 created first (KubeRay 1.6.2)") in comments


def test_the_operator_configuration_comes_from_the_chart(project: Project):
    # prod-eks-gpu turns the RayCronJob gate on through the chart's values; off, the operator ignores RayCronJobs
    path = project.root / "environments" / "prod-eks-gpu.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("RayCronJob: true", "RayCronJob: false"), encoding="utf-8")
    result = run(project, "show", "prod-eks-gpu", "--pods", "-o", "json")
    assert result.exit_code == 0, result.output
    [cron] = [o for o in json.loads(result.stdout) if o["object"] == "RayCronJob/ray-prod/nightly-eval"]
    assert cron["clusters"] == [] and "RayCronJob feature gate is off" in cron["skipped"]
    assert "RayCronJob/ray-prod/nightly-eval: no Pods: the RayCronJob feature gate is off" in result.stderr


def test_a_version_without_a_build_is_bad_input_saying_how_to_build(project: Project):
    result = run(project, "show", "dev", "--pods")
    assert result.exit_code == 2 and result.stdout == ""
    assert "environments/base.yaml:12:5: error: krc has no build of KubeRay 1.7.0's code (it has: 1.6.2)" \
        in result.stderr
    assert "engine/kuberay/README.md" in result.stderr and "make kuberay" in result.stderr
    assert "Traceback" not in result.stderr


def test_operator_config_reads_the_deployments_args_and_literal_env():
    deployment = {"kind": "Deployment", "spec": {"template": {"spec": {"containers": [{
        "name": "kuberay-operator", "image": "quay.io/kuberay/operator:v1.6.2",
        "command": ["/manager"], "args": ["--feature-gates=RayCronJob=true", "--enable-leader-election=true"],
        "env": [{"name": "CLUSTER_DOMAIN", "value": "corp.local"},
                {"name": "POD_NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]}]}}}}
    assert kuberay.operator_config([{"kind": "Service"}, deployment]) == {
        "args": ["--feature-gates=RayCronJob=true", "--enable-leader-election=true"],
        "env": [{"name": "CLUSTER_DOMAIN", "value": "corp.local"}]}


def test_one_process_per_version_serves_every_request():
    cluster = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "c", "namespace": "n"},
               "spec": {"headGroupSpec": {"template": {"spec": {"containers": [{"name": "h", "image": "i"}]}}}}}
    kuberay.build("1.6.2", {"args": [], "env": []}, [cluster])
    first = kuberay._PROCESSES["1.6.2"]
    domain = {"args": [], "env": [{"name": "CLUSTER_DOMAIN", "value": "corp.local"}]}
    [answer] = kuberay.build("1.6.2", domain, [cluster])
    assert kuberay._PROCESSES["1.6.2"] is first and first.alive()
    [service] = answer["clusters"][0]["services"]
    assert service["metadata"]["name"] == "c-head-svc"
    assert binary.binary_for("1.6.2") == Path(binary.KUBERAY_BUILDS, "bin", "krc-kuberay-v1.6.2")


def test_a_run_of_several_processes_shares_one_build_answering_as_its_own(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch):
    """Where a run compiles in several processes, KubeRay's build listens in the run's folder (shared_helper):
    its answers, refusals included, are those of a build of the process's own."""
    cluster = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "c", "namespace": "n"},
               "spec": {"headGroupSpec": {"template": {"spec": {"containers": [{"name": "h", "image": "i"}]}}}}}
    nameless = {**cluster, "metadata": {"namespace": "n"}}
    operator = {"args": [], "env": [{"name": "CLUSTER_DOMAIN", "value": "corp.local"}]}
    own = kuberay._ask("build", "1.6.2", operator, [cluster, nameless], None)
    run_folder = tmp_path / "run"
    run_folder.mkdir(mode=0o700)
    monkeypatch.setenv("KRC_ENGINE_SOCKET", str(run_folder / "engine.sock"))
    try:
        assert kuberay._ask("build", "1.6.2", operator, [cluster, nameless], None) == own
        assert (run_folder / "kuberay-v1.6.2.sock").is_socket() and "kuberay-v1.6.2" in shared_helper._STARTED
        assert own[1]["refusals"] and not own[0]["refusals"]
        verdicts = kuberay._ask("validate", "1.6.2", operator, [cluster, nameless], None)
        assert [v["refusals"] for v in verdicts] == [o["refusals"] for o in own]
        with pytest.raises(kuberay.OperatorRefused, match="RayNope"):
            kuberay._ask("build", "1.6.2", {"args": ["--feature-gates=RayNope=true"], "env": []}, [cluster], None)
    finally:
        shared_helper.end(lambda _name: True)


def test_the_pod_view_marks_what_the_operator_overrides(project: Project):
    path = project.root / "environments" / "prod-eks-gpu.yaml"
    text = path.read_text(encoding="utf-8")
    forced = "rayStartParams: {num-cpus: '0', no-monitor: 'false'}"
    path.write_text(text.replace("rayStartParams: {num-cpus: '0'}", forced), encoding="utf-8")
    result = run(project, "show", "prod-eks-gpu", "--pods")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    head = lines.index("# RayCluster/ray-prod/ray-gpu-train -> RayCluster ray-gpu-train: head group 'headgroup', "
                       "Pods: 1 (KubeRay 1.6.2)")
    mark = lines[head + 1]
    assert mark.startswith("# krc: warning: Head group sets rayStartParams no-monitor: 'false', which the operator "
                           "replaces with 'true'") and mark.endswith("[raycluster/forced-start-params]")
    # ... and KubeRay's own ray start says what the warning says
    [found] = [o for o in json.loads(run(project, "show", "prod-eks-gpu", "--pods", "-o", "json").stdout)
               if o["object"] == "RayCluster/ray-prod/ray-gpu-train"]
    assert len(found["overrides"]) == 1
    assert " --no-monitor " in found["clusters"][0]["pods"][0]["pod"]["spec"]["containers"][0]["args"][0]


def test_builders_that_do_not_answer_in_time_are_an_error_not_a_silent_pass(project: Project, private_cache: Path,
                                                                          monkeypatch):
    """kuberay/validator lets only an operator configuration KubeRay refuses pass quietly (another rule reports
    that); a build that does not answer stops the lint with its bound named (exit 2), never 'no problems'. (A
    cache of the test's own: no answer of the build kept from before.)"""
    monkeypatch.setattr(kuberay, "TIMEOUT_SECONDS", 0.0)
    kuberay.close_all()  # a fresh process: its answer cannot have come already
    result = run(project, "lint", "--no-cache", "prod-eks-gpu")
    assert result.exit_code == 2, result.output
    assert "KubeRay 1.6.2's builders did not answer within 0 s" in result.stderr
    assert "run again with fewer environments" in result.stderr


def test_answers_are_kept_by_build_operator_and_object(project: Project, private_cache: Path,
                                                      monkeypatch: pytest.MonkeyPatch):
    """What KubeRay's build answers depends on the build, the operator's configuration and the object alone, so
    a second `krc show --pods` (or `krc diff` of objects the compile asked about) starts no build; another
    operator configuration is asked again."""
    first = run(project, "show", "prod-eks-gpu", "--pods", "-o", "json")
    assert first.exit_code == 0, first.output
    asked: list[int] = []
    real_ask = kuberay._ask

    def counting(op: str, version: str, operator: dict, documents: list, where=None):
        asked.append(len(documents))
        return real_ask(op, version, operator, documents, where)

    monkeypatch.setattr(kuberay, "_ask", counting)
    again = run(project, "show", "prod-eks-gpu", "--pods", "-o", "json")
    assert again.exit_code == 0 and again.stdout == first.stdout and asked == []
    [source] = [o for o in json.loads(first.stdout) if o["object"] == "RayCluster/ray-prod/ray-gpu-train"]
    document = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "c", "namespace": "n"},
                "spec": {"headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [
                    {"name": "ray-head", "image": "rayproject/ray:2.46.0"}]}}}}}
    operator = {"args": [], "env": []}
    answer = kuberay.build("1.6.2", operator, [document])
    assert asked == [1] and kuberay.build("1.6.2", operator, [document]) == answer and asked == [1]
    kuberay.build("1.6.2", {"args": ["--feature-gates=RayCronJob=true"], "env": []}, [document])
    assert asked == [1, 1] and source["clusters"]


def test_the_lint_rule_asks_for_verdicts_alone_and_they_are_the_builds_refusals(monkeypatch: pytest.MonkeyPatch,
                                                                               tmp_path: Path):
    """kuberay/validator reads only the refusals: the `validate` op answers them without building Pods and
    Services, the same refusals and skip reasons as `build`; kept under a kind of their own, and a full answer
    already kept (a review's) serves as well."""
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))
    head = {"rayStartParams": {}, "template": {"spec": {"containers": [{"name": "ray-head", "image": "ray"}]}}}
    group = {"groupName": "cpu", "minReplicas": 1, "maxReplicas": 3, "rayStartParams": {},
             "template": {"spec": {"containers": [{"name": "ray-worker", "image": "ray"}]}}}
    documents = [
        {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "ok", "namespace": "n"},
         "spec": {"headGroupSpec": head, "workerGroupSpecs": [group]}},
        {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "refused", "namespace": "n"},
         "spec": {"headGroupSpec": head, "workerGroupSpecs": [{**group, "minReplicas": 5}]}},
        {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "elsewhere", "namespace": "n"},
         "spec": {"headGroupSpec": head, "managedBy": "kueue.x-k8s.io/multikueue"}},
    ]
    operator = {"args": [], "env": []}
    asked: list[str] = []
    real_ask = kuberay._ask

    def counting(op: str, version: str, operator: dict, documents: list, where=None):
        asked.append(op)
        return real_ask(op, version, operator, documents, where)

    monkeypatch.setattr(kuberay, "_ask", counting)
    verdicts = kuberay.verdicts("1.6.2", operator, documents)
    assert asked == ["validate"] and all(not v["clusters"] for v in verdicts)
    assert verdicts[1]["refusals"] and "minReplicas 5" in verdicts[1]["refusals"][0]["message"]
    assert "kueue" in verdicts[2]["skipped"]
    built = kuberay.build("1.6.2", operator, documents)
    assert built[0]["clusters"] and asked == ["validate", "build"]
    assert [(b["refusals"], b.get("skipped")) for b in built] == [(v["refusals"], v.get("skipped")) for v in verdicts]
    assert kuberay.verdicts("1.6.2", operator, documents) == verdicts and len(asked) == 2  # kept
    shutil.rmtree(tmp_path / "cache" / kuberay.VERDICTS.name)
    assert [v["refusals"] for v in kuberay.verdicts("1.6.2", operator, documents)] == \
        [v["refusals"] for v in verdicts] and len(asked) == 2  # the kept full answers serve
