"""The compile pipeline end to end: what dev and prod render, determinism, golden, nothing half-written."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from compiler import pipeline
from compiler.cache import signatures
from compiler.charts import vendored
from compiler.diagnostics.problems import KrcError
from compiler.documents import yamlio
from compiler.k8s.crds import crd_digest
from compiler.output import folders
from compiler.project.paths import Project


def line_of(project: Project, env: str, text: str) -> int:
    lines = project.environment_file(env).read_text().splitlines()
    return lines.index(text) + 1


def objects_by_ref(render: pipeline.Render) -> dict[str, dict]:
    return {o.ref: o.document for o in render.objects}


def test_dev_renders_the_product_notes_raycluster(project: Project):
    render = pipeline.compile_environment(project, "dev")
    objects = objects_by_ref(render)
    assert objects["Namespace/ray-demo"]["apiVersion"] == "v1"
    cluster = objects["RayCluster/ray-demo/ray-cpu-demo"]
    assert cluster["apiVersion"] == "ray.io/v1"
    spec = cluster["spec"]
    resources = {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"cpu": "1", "memory": "2Gi"}}
    image = "rayproject/ray:2.58.0-py312"
    assert spec == {
        "rayVersion": "2.58.0",
        "enableInTreeAutoscaling": True,
        "autoscalerOptions": {"version": "v2", "idleTimeoutSeconds": 60},
        "headGroupSpec": {
            "serviceType": "ClusterIP",
            "rayStartParams": {"num-cpus": "0"},
            "template": {"spec": {"containers": [{"name": "ray-head", "image": image, "resources": resources}]}},
        },
        "workerGroupSpecs": [{
            "groupName": "cpu", "replicas": 0, "minReplicas": 0, "maxReplicas": 2, "rayStartParams": {},
            "template": {"spec": {"containers": [{"name": "ray-worker", "image": image, "resources": resources}]}},
        }],
    }
    assert render.chart.version == "1.7.0"


def test_prod_gpu_groups_agree_on_gpus_tolerations_and_node_selectors(project: Project):
    render = pipeline.compile_environment(project, "prod-eks-gpu")
    assert render.chart.version == "1.6.2"
    cluster = objects_by_ref(render)["RayCluster/ray-prod/ray-gpu-train"]
    for group in cluster["spec"]["workerGroupSpecs"]:
        pod = group["template"]["spec"]
        limit = pod["containers"][0]["resources"]["limits"].get("nvidia.com/gpu")
        if limit is None:
            assert "num-gpus" not in group["rayStartParams"]
            continue
        assert group["rayStartParams"]["num-gpus"] == limit
        assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]
        assert pod["nodeSelector"]["karpenter.sh/nodepool"] == "gpu"
        assert pod["containers"][0]["image"].endswith("-gpu")
        assert pod["serviceAccountName"] == "ray-s3"


def test_prod_renders_every_kind_with_the_gates_it_needs(project: Project):
    render = pipeline.compile_environment(project, "prod-eks-gpu")
    kinds = sorted(o.document["kind"] for o in render.objects if o.document["kind"] != "Application")
    assert kinds == ["Namespace", "RayCluster", "RayCronJob", "RayJob", "RayService", "ServiceAccount"]
    objects = objects_by_ref(render)
    service = objects["RayService/ray-prod/summarizer"]["spec"]
    assert service["upgradeStrategy"]["type"] == "NewClusterWithIncrementalUpgrade"
    assert service["upgradeStrategy"]["clusterUpgradeOptions"]["gatewayClassName"] == "istio"
    assert service["rayClusterConfig"]["enableInTreeAutoscaling"] is True
    assert yamlio.load(service["serveConfigV2"])["applications"][0]["name"] == "summarizer"
    job = objects["RayJob/ray-prod/train-resnet"]["spec"]
    assert (job["shutdownAfterJobFinishes"], job["backoffLimit"]) == (True, 2)
    assert job["activeDeadlineSeconds"] > 0 and job["preRunningDeadlineSeconds"] > 0
    cron = objects["RayCronJob/ray-prod/nightly-eval"]["spec"]
    assert cron["schedule"] == "0 2 * * *" and "timeZone" not in cron  # the 1.6.2 CRD has no timeZone
    account = objects["ServiceAccount/ray-prod/ray-s3"]["metadata"]["annotations"]
    assert account["eks.amazonaws.com/role-arn"].startswith("arn:aws:iam::")
    gates = {g["name"]: g["enabled"] for g in render.helm_values["featureGates"]}
    assert gates["RayCronJob"] and gates["RayServiceIncrementalUpgrade"]
    assert gates["RayClusterStatusConditions"]  # chart defaults kept: Helm replaces lists whole
    assert render.helm_values["singleNamespaceInstall"] and render.helm_values["watchNamespace"] == ["ray-prod"]


def test_timezone_on_an_older_chart_is_an_error_naming_the_template(project: Project):
    path = project.environment_file("prod-eks-gpu")
    path.write_text(path.read_text().replace("    schedule: '0 2 * * *'\n",
                                             "    schedule: '0 2 * * *'\n    timeZone: Europe/Berlin\n"))
    with pytest.raises(KrcError) as err:
        pipeline.compile_environment(project, "prod-eks-gpu")
    problem = err.value.problems[0]
    assert problem.location.file == "templates/objects/raycronjobs.jsonnet"
    assert "timeZone needs kuberay-operator >= 1.7.0 (pinned: 1.6.2)" in problem.message


def test_timezone_is_emitted_on_1_7_0(project: Project):
    path = project.environment_file("prod-eks-gpu")
    text = path.read_text().replace("    version: 1.6.2\n", "    version: 1.7.0\n")
    path.write_text(text.replace("    schedule: '0 2 * * *'\n",
                                 "    schedule: '0 2 * * *'\n    timeZone: Europe/Berlin\n"))
    render = pipeline.compile_environment(project, "prod-eks-gpu")
    assert objects_by_ref(render)["RayCronJob/ray-prod/nightly-eval"]["spec"]["timeZone"] == "Europe/Berlin"


def test_raw_escape_hatch_merges_into_generated_fields(project: Project):
    path = project.environment_file("dev")
    path.write_text(path.read_text() + """\
        raw:
          template:
            spec:
              containers:
                - name: ray-worker
                  volumeMounts: [{name: data, mountPath: /data}]
              volumes: [{name: data, emptyDir: {}}]
""")
    spec = objects_by_ref(pipeline.compile_environment(project, "dev"))["RayCluster/ray-demo/ray-cpu-demo"]["spec"]
    pod = spec["workerGroupSpecs"][0]["template"]["spec"]
    assert pod["volumes"] == [{"name": "data", "emptyDir": {}}]
    assert pod["containers"][0]["volumeMounts"] == [{"name": "data", "mountPath": "/data"}]
    assert pod["containers"][0]["image"] == "rayproject/ray:2.58.0-py312"  # merged, not replaced


def test_objects_point_back_at_the_environment_item(project: Project):
    render = pipeline.compile_environment(project, "dev")
    cluster = next(o for o in render.objects if o.document["kind"] == "RayCluster")
    assert str(cluster.location) == f"environments/dev.yaml:{line_of(project, 'dev', '  - name: ray-cpu-demo')}:5"
    assert cluster.template == "templates/objects/rayclusters.jsonnet"


def test_rendered_crds_are_the_charts_as_shipped_and_the_lock_names_their_digests(project: Project):
    pipeline.render_to_disk(project, project.environment_names())
    for name in project.environment_names():
        folder = project.rendered_dir / name
        lock = yamlio.load((folder / "crds.lock.yaml").read_text(), "crds.lock.yaml")
        chart = vendored.load_vendored_chart(project.vendor_dir, lock["chart"], lock["version"])
        assert {c["name"]: c["sha256"] for c in lock["crds"]} == {crd.name: crd.digest for crd in chart.crds}
        assert {p.name: p.read_bytes() for p in (folder / "crds").iterdir()} == {
            f"{crd.name}.yaml": crd.shipped_bytes for crd in chart.crds}
        # the record's digest is that of the shipped file's canonical form (checked on one: each is 1 MB of YAML)
        smallest = min(chart.crds, key=lambda crd: len(crd.shipped_bytes))
        assert crd_digest(yamlio.load(smallest.shipped_bytes.decode(), smallest.source)) == smallest.digest


def test_render_is_byte_identical_across_runs_and_paths(tmp_path: Path, vendor_cache: Path, project: Project):
    pipeline.render_to_disk(project, project.environment_names())
    first = folders.read_tree(project.rendered_dir)
    other = Project(tmp_path / "elsewhere" / "deeper")
    shutil.copytree(project.root / "environments", other.environments_dir)
    shutil.copytree(project.root / "templates", other.templates_dir)
    shutil.copytree(vendor_cache, other.vendor_dir)
    pipeline.render_to_disk(other, other.environment_names())
    pipeline.render_to_disk(other, other.environment_names())
    assert folders.read_tree(other.rendered_dir) == first
    assert all(content.endswith(b"\n") for content in first.values())
    assert {p.split("/")[1] for p in first} == {"chart", "crds", "crds.lock.yaml", "helm", "manifests"}


def test_the_fixture_golden_matches_the_render(project: Project):
    """The fixture project's golden/ is current with the templates (`make fixture-golden` regenerates it); the
    shipped golden/ is checked by `make render` (krc check), not by the tests."""
    for name in project.environment_names():
        render = pipeline.compile_environment(project, name)
        mismatch = pipeline.compare_with_golden(render, project.golden_dir)
        assert mismatch.clean, mismatch


def test_a_failing_environment_writes_nothing_for_any_environment(project: Project):
    pipeline.render_to_disk(project, ["dev"])
    before = folders.read_tree(project.rendered_dir)
    path = project.environment_file("prod-eks-gpu")
    path.write_text(path.read_text() + "unknownKey: 1\n")
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text().replace("maxReplicas: 2", "maxReplicas: 5"))
    with pytest.raises(KrcError):
        pipeline.render_to_disk(project, project.environment_names())
    assert folders.read_tree(project.rendered_dir) == before
    assert not list(project.root.glob("rendered/.*"))  # no staging folders left behind


@pytest.mark.usefixtures("project_without_policies")  # not about policies: no CUE engine run
def test_golden_accept_and_mismatch_listing(project: Project):
    pipeline.accept_golden(project, ["dev"])
    assert all(m.clean for m in pipeline.check_golden(project, ["dev"]))
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text().replace("maxReplicas: 2", "maxReplicas: 5"))
    (project.golden_dir / "dev" / "manifests" / "stale.yaml").write_text("x: 1\n")
    [mismatch] = pipeline.check_golden(project, ["dev"])
    assert mismatch.changed == ("manifests/raycluster-ray-cpu-demo.yaml",)
    assert mismatch.removed == ("manifests/stale.yaml",)
    assert "crds/rayclusters.ray.io.yaml" not in folders.read_tree(project.golden_dir / "dev")


def test_explain_prints_value_and_chain(project: Project):
    result = pipeline.explain(project, "prod-eks-gpu", "operator.chart.version")
    assert result.value == "1.6.2"
    assert [str(loc) for loc in result.chain] == [
        f"environments/base.yaml:{line_of(project, 'base', '    version: 1.7.0')}:5",
        f"environments/prod-eks-gpu.yaml:{line_of(project, 'prod-eks-gpu', '    version: 1.6.2')}:5"]


def test_render_refuses_error_level_findings_and_points_at_the_environment(project: Project):
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text().replace("        minReplicas: 0\n        maxReplicas: 2\n",
                                           "        minReplicas: 3\n        maxReplicas: 2\n"))
    with pytest.raises(KrcError) as err:
        pipeline.render_to_disk(project, ["dev"])
    assert not project.rendered_dir.exists()
    problems = err.value.problems
    assert problems and all(p.severity == "error" for p in problems)
    line = line_of(project, "dev", "        minReplicas: 3")
    assert any(str(p.location) == f"environments/dev.yaml:{line}:9" and "minReplicas" in p.message
               for p in problems), [p.one_line() for p in problems]


def test_null_removes_inherited_and_generated_keys(project: Project):
    (project.environments_dir / "bare.yaml").write_text("""\
extends: dev
labels:
  app.kubernetes.io/managed-by: null
operator:
  watchNamespaces: null
  values:
    resources: null
    fullnameOverride: null
clusters:
  - name: ray-cpu-demo
    autoscaling: null
    head:
      rayStartParams:
        num-cpus: null
    raw:
      rayVersion: null
""")
    render = pipeline.compile_environment(project, "bare")
    cluster = objects_by_ref(render)["RayCluster/ray-demo/ray-cpu-demo"]
    assert "labels" not in cluster["metadata"]  # inherited label removed
    assert "enableInTreeAutoscaling" not in cluster["spec"] and "autoscalerOptions" not in cluster["spec"]
    assert cluster["spec"]["headGroupSpec"]["rayStartParams"] == {}
    assert "rayVersion" not in cluster["spec"]  # a generated key removed through raw
    assert "singleNamespaceInstall" in render.helm_values and "watchNamespace" not in render.helm_values
    assert "fullnameOverride" not in render.helm_values  # generated by the template, removed
    assert render.helm_values["resources"] is None  # not generated: kept, so Helm drops the chart default


def test_check_sees_a_golden_edit_that_keeps_the_size_and_the_modification_time(project: Project,
                                                                               monkeypatch: pytest.MonkeyPatch):
    # golden/'s digests come from a stat-signature memo (tree_digests): an edit must still reach `krc check`
    monkeypatch.setattr(signatures, "RACY_SECONDS", 0.0)  # remember signatures at once (not after 2 s)
    pipeline.accept_golden(project, ["dev"])
    assert all(m.clean for m in pipeline.check_golden(project, ["dev"]))
    assert all(m.clean for m in pipeline.check_golden(project, ["dev"]))  # answered from the memo
    target = project.golden_dir / "dev" / "manifests" / "raycluster-ray-cpu-demo.yaml"
    before = target.stat()
    text = target.read_text()
    target.write_text(text.replace("maxReplicas: 2", "maxReplicas: 9"))
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert target.stat().st_size == before.st_size and target.stat().st_mtime_ns == before.st_mtime_ns
    [mismatch] = pipeline.check_golden(project, ["dev"])
    assert mismatch.changed == ("manifests/raycluster-ray-cpu-demo.yaml",)
