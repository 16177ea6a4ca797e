"""The Argo CD objects krc ships and renders, checked against Argo CD v3.5.1's real CRDs and plugin contract."""
from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
import yaml
from argocd_sidecar import run
from click.testing import CliRunner

from compiler import argocd, pipeline
from compiler.argocd import validation
from compiler.argocd.parameters import PARAMETERS, Request, read_request
from compiler.argocd.selection import select_documents
from compiler.cli import main
from compiler.diagnostics.problems import KrcError
from compiler.project.paths import Project
from compiler.validation import SchemaSet

REPO_ROOT = Path(__file__).resolve().parents[2]
DEPLOY = REPO_ROOT / "deploy" / "argocd"


def _applications(render: pipeline.Render) -> dict[str, dict]:
    return {o.document["metadata"]["labels"]["krc.dev/argocd-role"]: o.document for o in render.objects
            if o.document["kind"] == "Application"}


def _errors(schemas: SchemaSet, document: dict) -> list[str]:
    result = schemas.validate(document)
    assert schemas.knows(document)
    return [p.one_line() for p in result.problems if p.severity == "error"]


def test_every_rendered_application_is_valid_for_argocd(project: Project, argocd_schemas: SchemaSet):
    for name in project.environment_names():
        render = pipeline.compile_environment(project, name)
        apps = _applications(render)
        assert sorted(apps) == ["crds", "operator", "root", "workloads"]
        children = select_documents(render.objects, render.chart.crds, Request(name, "exclude", "only", "gpu-eu-1"))
        for document in [*apps.values(), *children]:
            assert _errors(argocd_schemas, document) == [], document["metadata"]["name"]


def test_schema_check_catches_a_wrong_application(project: Project, argocd_schemas: SchemaSet):
    render = pipeline.compile_environment(project, "dev")
    broken = copy.deepcopy(_applications(render)["workloads"])
    broken["spec"]["syncPolicy"]["automated"]["prune"] = "yes"
    broken["spec"]["source"]["plugin"]["parameters"][0]["strnig"] = "dev"
    errors = _errors(argocd_schemas, broken)
    assert any("prune" in e for e in errors) and any("strnig" in e for e in errors), errors


def test_shipped_applicationset_is_valid_for_argocd(argocd_schemas: SchemaSet):
    [document] = yaml.safe_load_all((DEPLOY / "applicationset.yaml").read_text())
    assert document["kind"] == "ApplicationSet"
    assert _errors(argocd_schemas, document) == []
    parameters = {p["name"] for p in document["spec"]["template"]["spec"]["source"]["plugin"]["parameters"]}
    assert parameters <= set(PARAMETERS)


def test_app_of_apps_follows_the_argocd_contract(project: Project):
    render = pipeline.compile_environment(project, "prod-eks-gpu")
    apps = _applications(render)
    crds, operator, workloads = apps["crds"], apps["operator"], apps["workloads"]
    wave = {role: int(app["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"])
            for role, app in apps.items() if role != "root"}
    assert wave["crds"] < wave["operator"] < wave["workloads"]

    assert "ServerSideApply=true" in crds["spec"]["syncPolicy"]["syncOptions"]
    assert crds["spec"]["syncPolicy"]["automated"]["prune"] is False
    # Prune=false / Delete=false are resource-level sync options: on each CRD, not on the Application
    assert not {"Prune=false", "Delete=false"} & set(crds["spec"]["syncPolicy"]["syncOptions"])
    assert "finalizers" not in crds["metadata"]  # deleting the app never cascades to the CRDs
    assert {"name": "crds", "string": "only"} in crds["spec"]["source"]["plugin"]["parameters"]

    # the operator chart through the plugin (the pinned Helm's render), with the chart version in its spec
    assert {"name": "operator", "string": "only"} in operator["spec"]["source"]["plugin"]["parameters"]
    assert {"name": "crds", "string": "exclude"} in operator["spec"]["source"]["plugin"]["parameters"]
    assert {"name": "chartVersion", "string": "1.6.2"} in operator["spec"]["source"]["plugin"]["parameters"]
    assert operator["spec"]["destination"] == {"name": "prod-eks-gpu", "namespace": "kuberay-system"}
    assert "CreateNamespace=true" in operator["spec"]["syncPolicy"]["syncOptions"]

    [ignored] = workloads["spec"]["ignoreDifferences"]
    assert (ignored["kind"], ignored["name"], ignored["namespace"]) == ("RayCluster", "ray-gpu-train", "ray-prod")
    assert ".spec.workerGroupSpecs[].replicas" in ignored["jqPathExpressions"]
    options = set(workloads["spec"]["syncPolicy"]["syncOptions"])
    assert "ServerSideApply=true" in options
    # opt-in only: the live workerGroupSpecs list (atomic) would replace Git's worker group changes in a sync
    assert "RespectIgnoreDifferences=true" not in options
    assert {"name": "crds", "string": "exclude"} in workloads["spec"]["source"]["plugin"]["parameters"]
    assert {"name": "operator", "string": "exclude"} in workloads["spec"]["source"]["plugin"]["parameters"]
    # the lint rule about autoscaled replicas is satisfied by what the template emits
    findings = pipeline.check_environment(render).findings
    assert not [p for p in findings if p.rule == "argocd/autoscaled-replicas-ignored"]


def test_disabled_argocd_renders_no_applications(project: Project):
    path = project.environment_file("dev")
    path.write_text(path.read_text().replace("argocd:\n", "argocd:\n  enabled: false\n", 1))
    render = pipeline.compile_environment(project, "dev")
    assert not [o for o in render.objects if o.document["kind"] == "Application"]
    assert any(o.document["kind"] == "RayCluster" for o in render.objects)


def test_environment_names_argocd_crds_for_the_check(project: Project, argocd_crds_dir: Path):
    shutil.copytree(argocd_crds_dir, project.root / "argocd-crds")
    base = project.environment_file("base")
    base.write_text(base.read_text().replace("argocd:\n", "argocd:\n  crds: argocd-crds\n", 1))
    render = pipeline.compile_environment(project, "dev")
    found = validation.environment_problems(project, render.environment, render.objects)
    # the API server's only word on them: advice on Argo CD's own finalizer name, an info finding
    assert found and {(p.rule, p.severity) for p in found} == {("schema/server-warning", "info")}
    assert all("resources-finalizer.argocd.argoproj.io" in p.message for p in found)

    checked = CliRunner().invoke(main, ["--project", str(project.root), "argocd", "validate"])
    assert checked.exit_code == 0, checked.output

    base.write_text(base.read_text().replace("crds: argocd-crds", "crds: templates"))  # no Argo CD CRDs there
    render = pipeline.compile_environment(project, "dev")
    with pytest.raises(KrcError, match="no CustomResourceDefinition found"):
        validation.environment_problems(project, render.environment, render.objects)


# What cmpserver/plugin/config.go reads; the YAML decoder ignores anything else, so a typo silently drops a field.
PLUGIN_SPEC_FIELDS = {"version", "init", "generate", "discover", "parameters", "preserveFileMode", "provideGitCreds"}
COMMAND_FIELDS = {"command", "args"}
ANNOUNCEMENT_FIELDS = {"name", "title", "tooltip", "required", "itemType", "collectionType", "string", "array", "map"}


def test_plugin_yaml_has_only_fields_argocd_reads(project: Project):
    plugin = yaml.safe_load((DEPLOY / "plugin.yaml").read_text())
    assert plugin["kind"] == "ConfigManagementPlugin" and plugin["metadata"]["name"]  # ValidatePluginConfig
    spec = plugin["spec"]
    assert set(spec) <= PLUGIN_SPEC_FIELDS
    assert spec["generate"]["command"] and "version" not in spec  # a version would rename the plugin
    for name in ("init", "generate"):
        assert set(spec[name]) <= COMMAND_FIELDS and spec[name]["command"][0] == "krc"
    # every Application names the plugin; a discover block would make Argo CD send the repository twice per request
    assert "discover" not in spec
    announced = spec["parameters"]["static"]
    assert all(set(a) <= ANNOUNCEMENT_FIELDS and a.get("collectionType", "string") == "string" for a in announced)
    assert {a["name"] for a in announced} == set(PARAMETERS)
    assert next(a for a in announced if a["name"] == "environment")["required"] is True

    # every Application krc renders names this plugin, and only with parameters it announces
    for name in project.environment_names():
        for obj in pipeline.compile_environment(project, name).objects:
            plugin_ref = obj.document.get("spec", {}).get("source", {}).get("plugin")
            if plugin_ref:
                assert plugin_ref["name"] == plugin["metadata"]["name"]
                assert {p["name"] for p in plugin_ref["parameters"]} <= set(PARAMETERS)


def test_plugin_commands_run(project: Project, cache_dir: Path):
    """The argv in plugin.yaml, in the app path (a sidecar's cache, charts parsed), run in this process: a process
    of its own adds nothing here (tests/argocd/test_argocd_generate.py's true sidecar test starts `krc` as the
    CMP server does)."""
    spec = yaml.safe_load((DEPLOY / "plugin.yaml").read_text())["spec"]
    env = {"ARGOCD_ENV_KRC_ENVIRONMENT": "dev", "KRC_CACHE_DIR": str(cache_dir / "krc"),
           "KRC_CHART_REPOSITORY": "file:///nonexistent"}
    for step in ("init", "generate"):
        argv = spec[step]["command"] + spec[step].get("args", [])
        assert argv[:2] == ["krc", "argocd"]
        done = run(project.root, env, *argv[2:])
        assert done.returncode == 0, done.stderr  # init needs no network: the chart is already vendored
    assert b"kind: RayCluster" in done.stdout


def test_repo_server_patch_and_dockerfile_follow_the_sidecar_contract():
    patch = yaml.safe_load((DEPLOY / "repo-server-patch.yaml").read_text())
    [container] = patch["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["/var/run/argocd/argocd-cmp-server"]
    assert container["securityContext"]["runAsUser"] == 999 and container["securityContext"]["runAsNonRoot"]
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    assert mounts["/var/run/argocd"] == "var-files" and mounts["/home/argocd/cmp-server/plugins"] == "plugins"
    assert mounts["/tmp"] in {v["name"] for v in patch["spec"]["template"]["spec"]["volumes"]}
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "USER 999" in dockerfile and "/home/argocd/cmp-server/config/plugin.yaml" in dockerfile
    # no Helm binary: the engine inside the krc wheel renders charts (tests/argocd/test_image_steps.py)
    assert "helm" not in dockerfile.split("FROM python:3.11-slim\n", 1)[1].lower().replace("helm:", "")


def test_operator_application_renders_what_krc_reviews(project: Project):
    """The operator app deploys the chart objects krc renders with the pinned Helm, into its own namespace, for
    the pinned chart version; the sync-order rule sees them as that app's."""
    render = pipeline.compile_environment(project, "prod-eks-gpu")
    operator = next(o.document for o in render.objects if o.document["metadata"]["name"].endswith("-operator"))
    request = read_request({"ARGOCD_APP_PARAMETERS": json.dumps(operator["spec"]["source"]["plugin"]["parameters"])})
    generated = argocd.generated(argocd.CheckedEnvironment(render.environment.name, render.chart.version, (),
                                                           render.objects, render.chart_objects, ()), request)
    documents = [d for d in yaml.safe_load_all(generated.stream) if d]
    assert documents == [o.document for o in render.chart_objects] and len(documents) == 7
    namespace = operator["spec"]["destination"]["namespace"]
    deployment = next(d for d in documents if d["kind"] == "Deployment")
    assert deployment["metadata"]["namespace"] == namespace
    assert deployment["metadata"]["labels"]["app.kubernetes.io/instance"] == render.chart.name
    assert not [p for p in pipeline.check_environment(render).findings if p.rule == "argocd/sync-order"]


def test_respect_ignore_differences_is_opt_in(project: Project):
    path = project.environment_file("prod-eks-gpu")
    path.write_text(path.read_text().replace("argocd:\n", "argocd:\n  respectIgnoreDifferences: true\n", 1))
    render = pipeline.compile_environment(project, "prod-eks-gpu")
    workloads = next(o.document for o in render.objects if o.document["metadata"]["name"].endswith("-workloads"))
    assert "RespectIgnoreDifferences=true" in workloads["spec"]["syncPolicy"]["syncOptions"]
