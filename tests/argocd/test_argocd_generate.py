"""`krc argocd generate` run as Argo CD's sidecar runs it, compared with `krc render`."""
from __future__ import annotations

import os
from pathlib import Path

import yaml
from argocd_sidecar import argocd_environ, finish, parameters, run, run_sidecar, sidecar_copy, start, tree_digest

from compiler import pipeline
from compiler.argocd.selection import CRD_ANNOTATIONS
from compiler.documents import yamlio
from compiler.k8s.crds import crd_digest
from compiler.project.paths import Project


# Both sides carry the CRDs (megabytes of YAML): parsed with krc's fast loader, which gives what the safe loader
# gives (tests/crddiff/test_crddiff_charts.py holds it to that) in a fraction of the time.
def _documents(stdout: bytes) -> list[dict]:
    return yamlio.load_all(stdout.decode("utf-8"), "stdout")


def _rendered(project: Project, environment: str) -> tuple[list[dict], dict[str, str], list[dict]]:
    """What `krc render` writes for the environment: its manifests and the operator chart's objects, parsed, and
    the digest of each CRD's canonical form by name, from the crds.lock.yaml it writes beside crds/ (the test of
    the lock naming the digests of the files in crds/ is in tests/test_pipeline.py)."""
    pipeline.render_to_disk(project, [environment])
    folder = project.rendered_dir / environment
    manifests, chart = ([yamlio.load_all(p.read_text(), str(p))[0] for p in sorted((folder / sub).glob("*"))]
                        for sub in ("manifests", "chart"))
    lock = yamlio.load((folder / "crds.lock.yaml").read_text(), "crds.lock.yaml")
    return manifests, {crd["name"]: crd["sha256"] for crd in lock["crds"]}, chart


def _key(document: dict) -> tuple:
    meta = document["metadata"]
    return (document["kind"], meta.get("namespace", ""), meta["name"])


def _without_argocd_annotations(crd: dict) -> dict:
    annotations = {k: v for k, v in crd["metadata"]["annotations"].items() if k not in CRD_ANNOTATIONS}
    return {**crd, "metadata": {**crd["metadata"], "annotations": annotations}}


def test_generate_matches_render_for_every_environment(project: Project, app_dir: Path, cache_dir: Path):
    """The true sidecar test: krc as a process of its own, as the CMP server starts it, for the first environment;
    the others through the same command line in this process (`run`), where a process adds nothing more."""
    before = tree_digest(app_dir)
    for n, environment in enumerate(project.environment_names()):
        result = (run if n else run_sidecar)(app_dir, argocd_environ(cache_dir, parameters(environment)))
        assert result.returncode == 0, result.stderr
        assert "apiVersion" not in result.stderr and "kind:" not in result.stderr  # no manifests on stderr
        documents = _documents(result.stdout)
        manifests, crds, chart = _rendered(project, environment)

        generated_crds = [d for d in documents if d["kind"] == "CustomResourceDefinition"]
        assert len(crds) == 4 and {c["metadata"]["name"]: crd_digest(_without_argocd_annotations(c))
                                   for c in generated_crds} == crds
        for crd in generated_crds:  # server-side apply, first wave, never pruned or deleted
            assert CRD_ANNOTATIONS.items() <= crd["metadata"]["annotations"].items()
            assert "ServerSideApply=true" in crd["metadata"]["annotations"]["argocd.argoproj.io/sync-options"]

        workloads = {_key(d): d for d in documents if d["kind"] != "CustomResourceDefinition"}
        expected = {_key(d): d for d in manifests + chart if not d["apiVersion"].startswith("argoproj.io/")}
        assert workloads == expected and any(k[0] == "RayCluster" for k in workloads)
        assert any(k[0] == "Deployment" for k in workloads)  # operator=include (default): the chart's objects too
        assert not any(d["kind"] == "Application" for d in documents)  # applications default to exclude
    assert tree_digest(app_dir) == before, "generate wrote inside the repository copy"
    assert not any((cache_dir / "home").iterdir()), "generate wrote into HOME"


def test_crds_and_applications_selections(project: Project, app_dir: Path, cache_dir: Path):
    only_crds = run(app_dir, argocd_environ(cache_dir, parameters("prod-eks-gpu", crds="only")))
    assert only_crds.returncode == 0, only_crds.stderr
    # the foundations: the CRDs and the Namespaces, never pruned or deleted
    foundations = _documents(only_crds.stdout)
    assert {d["kind"] for d in foundations} == {"CustomResourceDefinition", "Namespace"}
    assert all("Prune=false,Delete=false" in d["metadata"]["annotations"]["argocd.argoproj.io/sync-options"]
               for d in foundations)

    excluded = run(app_dir, argocd_environ(cache_dir, parameters("prod-eks-gpu", crds="exclude", operator="exclude")))
    kinds = [d["kind"] for d in _documents(excluded.stdout)]
    assert "CustomResourceDefinition" not in kinds and "Namespace" not in kinds and "RayService" in kinds
    assert "Deployment" not in kinds and "Role" not in kinds  # the operator chart is the operator app's

    # the operator app: exactly what golden/<env>/chart/ holds (the pinned Helm's render), nothing else
    operator = run(app_dir, argocd_environ(cache_dir, parameters("prod-eks-gpu", crds="exclude", operator="only",
                                                                  chartVersion="1.6.2")))
    assert operator.returncode == 0, operator.stderr
    golden_chart = [yaml.load(p.read_text(), Loader=yaml.CSafeLoader)
                    for p in sorted((project.golden_dir / "prod-eks-gpu" / "chart").glob("*.yaml"))]
    assert len(golden_chart) == 7
    assert sorted(map(_key, _documents(operator.stdout))) == sorted(map(_key, golden_chart))
    assert {_key(d): d for d in _documents(operator.stdout)} == {_key(d): d for d in golden_chart}

    stale = run(app_dir, argocd_environ(cache_dir, parameters("prod-eks-gpu", crds="only") + [
        {"name": "chartVersion", "string": "1.5.2"}]))
    assert stale.returncode != 0 and not stale.stdout
    assert "the Application asks for chart 1.5.2, environment prod-eks-gpu pins 1.6.2" in stale.stderr

    children = run(app_dir, argocd_environ(cache_dir, parameters("prod-eks-gpu", crds="exclude",
                                                                  applications="only", cluster="gpu-eu-1")))
    assert children.returncode == 0, children.stderr
    apps = _documents(children.stdout)
    assert sorted(a["metadata"]["name"] for a in apps) == [
        "krc-prod-eks-gpu-gpu-eu-1-crds", "krc-prod-eks-gpu-gpu-eu-1-operator", "krc-prod-eks-gpu-gpu-eu-1-workloads"]
    assert all(a["spec"]["destination"]["name"] == "gpu-eu-1" for a in apps)


def test_environment_from_plugin_env_and_param_variables(app_dir: Path, cache_dir: Path):
    via_env = run(app_dir, argocd_environ(cache_dir, None, {"ARGOCD_ENV_KRC_ENVIRONMENT": "dev"}))
    via_param = run(app_dir, argocd_environ(cache_dir, None, {"PARAM_ENVIRONMENT": "dev"}))
    via_json = run(app_dir, argocd_environ(cache_dir, parameters("dev"), {"ARGOCD_ENV_KRC_ENVIRONMENT": "nope"}))
    assert via_env.returncode == via_param.returncode == via_json.returncode == 0, via_env.stderr
    assert via_env.stdout == via_param.stdout == via_json.stdout  # the JSON parameters win over plugin env


def _assert_fails(result, *needles: str) -> None:
    assert result.returncode != 0
    assert result.stdout == b"", "a failing generate must print nothing on stdout"
    for needle in needles:
        assert needle in result.stderr, result.stderr


def test_errors_give_nonzero_exit_and_empty_stdout(app_dir: Path, cache_dir: Path):
    _assert_fails(run(app_dir, argocd_environ(cache_dir, None)), "no environment chosen", "dev, prod-eks-gpu")
    _assert_fails(run(app_dir, argocd_environ(cache_dir, parameters("staging"))), "unknown environment 'staging'",
                  "dev, prod-eks-gpu")
    _assert_fails(run(app_dir, argocd_environ(cache_dir, parameters("dev", crds="some"))), "include, exclude, only")
    _assert_fails(run(app_dir, argocd_environ(cache_dir, None, {"ARGOCD_APP_PARAMETERS": "{not json"})),
                  "ARGOCD_APP_PARAMETERS is not valid JSON")

    (app_dir / "environments" / "broken.yaml").write_text("extends: dev\nclusters:\n  - name: ray-cpu-demo\n"
                                                          "    workerGroups:\n      - name: cpu\n        cpus: 2\n")
    _assert_fails(run(app_dir, argocd_environ(cache_dir, parameters("broken"))),
                  "environments/broken.yaml:6", "unknown key 'cpus'")


def test_error_level_lint_findings_fail_generate(app_dir: Path, cache_dir: Path):
    # dev is declared CPU-only: a GPU worker group is an error-level finding, though it renders fine
    (app_dir / "environments" / "dev-gpu.yaml").write_text(
        "extends: dev\nclusters:\n  - name: ray-cpu-demo\n    workerGroups:\n      - name: gpu\n        gpu: 1\n")
    _assert_fails(run(app_dir, argocd_environ(cache_dir, parameters("dev-gpu"))), "error",
                  "resources/gpu-in-cpu-only-environment")


def test_missing_chart_points_at_init(app_dir: Path, cache_dir: Path):
    for archive in (app_dir / "vendor" / "charts").glob("*.tgz"):
        archive.unlink()
    _assert_fails(run(app_dir, argocd_environ(cache_dir, parameters("dev"))), "is not vendored")
    mirror = {"KRC_CHART_REPOSITORY": os.environ["KRC_CHART_REPOSITORY"]}  # the file:// mirror tests use
    init = run(app_dir, argocd_environ(cache_dir, parameters("dev"), mirror), "init")
    assert init.returncode == 0 and init.stdout == b"", init.stderr
    assert run(app_dir, argocd_environ(cache_dir, parameters("dev"))).returncode == 0


def test_concurrent_runs_match_sequential_runs(project: Project, tmp_path: Path, cache_dir: Path):
    """Four requests at once, each in its own copy (as Argo CD sends them) and process, sharing one sidecar cache,
    print what the same requests print one after the other."""
    environments = project.environment_names()
    for i in range(4 - len(environments)):
        name = f"team-{i}"
        base = environments[i % len(environments)]
        (project.environments_dir / f"{name}.yaml").write_text(f"extends: {base}\nlabels:\n  team: team-{i}\n")
    names = project.environment_names()
    assert len(names) == 4
    copies = [sidecar_copy(project.root, tmp_path / f"copy-{i}") for i in range(len(names))]
    requests = [(copy, argocd_environ(cache_dir, parameters(name))) for copy, name in zip(copies, names, strict=True)]

    sequential = [run(copy, environ) for copy, environ in requests]  # in this process: the same command line
    processes = [start(copy, environ) for copy, environ in requests]
    concurrent = [finish(p) for p in processes]
    assert all(r.returncode == 0 for r in sequential + concurrent), [r.stderr for r in concurrent]
    assert [r.stdout for r in concurrent] == [r.stdout for r in sequential]
    assert len({r.stdout for r in sequential}) == len(names)  # different environments, different bytes
