"""The everyday commands: --version, envs, show, init, explain, rules policy/NAME; help, completion, progress."""
from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
from pathlib import Path

import click
import pytest
import yaml
from click.shell_completion import ShellComplete
from click.testing import CliRunner
from project_support import REPO_ROOT

from compiler.cli import main
from compiler.diagnostics.problems import Problem
from compiler.diagnostics.report_format import plural, progress, summary
from compiler.environment.schema import environment_schema
from compiler.project.paths import Project


def run(project: Project, *args: str):
    return CliRunner().invoke(main, ["--project", str(project.root), *args])


def test_version_names_krc_and_every_engine(project: Project):
    result = run(project, "--version")
    assert result.exit_code == 0, result.output
    names = [line.split()[0] for line in result.stdout.splitlines()]
    assert names[:6] == ["krc", "Jinja2", "Jsonnet", "engine", "Helm", "Kubernetes"] and "CUE" in names
    assert re.search(r"^krc\s+\d+\.\d+\.\d+$", result.stdout, re.M)
    assert re.search(r"^Jsonnet\s+go-jsonnet \d+\.\d+", result.stdout, re.M)
    # the engine's build (which binary, its digest, its Go) and the upstream modules it was built with
    assert re.search(r"^engine\s+/\S+/krc-engine \(sha256 [0-9a-f]{12}, go1\.26\.\d+\)$", result.stdout, re.M)
    assert re.search(r"^Helm\s+v4\.2\.1 \(Helm SDK in the engine\)$", result.stdout, re.M)
    assert re.search(r"^Kubernetes\s+apiextensions-apiserver v0\.36\.\d+, client-go v0\.36\.\d+$", result.stdout, re.M)


def test_envs_lists_layers_destination_and_chart(project: Project):
    result = run(project, "envs")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["ENVIRONMENT", "LAYERS", "NAMESPACE", "DESTINATION", "CHART"]
    assert lines[1].split() == ["dev", "base", ">", "dev", "ray-demo", "https://kubernetes.default.svc",
                                "kuberay-operator@1.7.0"]
    assert lines[2].split()[0] == "prod-eks-gpu" and lines[2].split()[-1] == "kuberay-operator@1.6.2"
    data = json.loads(run(project, "envs", "--format", "json").stdout)
    assert data[0] == {"name": "dev", "layers": ["environments/base.yaml", "environments/dev.yaml"],
                       "namespace": "ray-demo", "destination": "https://kubernetes.default.svc",
                       "chart": "kuberay-operator@1.7.0"}


def test_show_prints_the_objects_as_yaml_or_json_and_filters_kinds(project: Project):
    result = run(project, "show", "dev", "--kind", "RayCluster")
    assert result.exit_code == 0, result.output
    [cluster] = list(yaml.safe_load_all(result.stdout))
    assert cluster["kind"] == "RayCluster" and cluster["metadata"]["name"] == "ray-cpu-demo"
    everything = json.loads(run(project, "show", "dev", "-o", "json").stdout)
    # everything dev deploys: its objects and the operator chart's (issue 34: the chart's Deployment too)
    assert sorted({o["kind"] for o in everything}) == ["Application", "Deployment", "Namespace", "RayCluster", "Role",
                                                       "RoleBinding", "Service", "ServiceAccount"]
    assert not (project.root / "rendered").exists()  # show writes nothing
    missing = run(project, "show", "dev", "--kind", "Pod")
    assert missing.exit_code == 2
    assert "environment dev renders no Pod" in missing.stderr and "help: kinds it renders:" in missing.stderr


def test_init_writes_a_valid_environment_that_renders(project: Project):
    result = run(project, "init", "staging", "--extends", "base", "--namespace", "ray-staging",
                 "--destination", "https://staging.example.com")
    assert result.exit_code == 0, result.output
    text = project.environment_file("staging").read_text()
    assert text.startswith("# yaml-language-server: $schema=../compiler/schemas/environment.schema.json\n")
    assert yaml.safe_load(text) == {"extends": "base", "description": "Describe what staging is for",
                                    "namespace": "ray-staging", "namespaces": [{"name": "ray-staging"}],
                                    "operator": {"namespace": "kuberay-staging", "watchNamespaces": ["ray-staging"]},
                                    "argocd": {"destination": {"server": "https://staging.example.com"}}}
    assert text.splitlines()[3] == "extends: base"  # what it builds on comes first
    assert "staging" in run(project, "envs").stdout
    rendered = run(project, "render", "staging")
    assert rendered.exit_code == 0, rendered.output
    named = run(project, "init", "eu", "--extends", "dev", "--destination", "eu-cluster")
    assert named.exit_code == 0, named.output
    assert yaml.safe_load(project.environment_file("eu").read_text())["argocd"] == {
        "destination": {"name": "eu-cluster"}}


@pytest.mark.usefixtures("project_without_policies")
def test_init_without_options_gives_namespaces_of_its_own_and_collides_with_nothing(project: Project):
    """The README's `krc init staging --extends base` (issue 36, item 4): dev deploys to the in-cluster server
    too, so staging gets workload and operator namespaces of its own, and its operator watches only its own."""
    result = run(project, "init", "staging", "--extends", "base")
    assert result.exit_code == 0, result.output
    data = yaml.safe_load(project.environment_file("staging").read_text())
    assert (data["namespace"], data["namespaces"]) == ("ray-staging", [{"name": "ray-staging"}])
    assert data["operator"] == {"namespace": "kuberay-staging", "watchNamespaces": ["ray-staging"]}
    linted = run(project, "lint", "staging", "dev")
    assert "destination-collision" not in linted.output, linted.output
    assert run(project, "golden", "staging").exit_code == 0
    assert run(project, "golden", "dev").exit_code == 0


def test_init_asks_for_a_destination_rather_than_write_a_collision(project: Project):
    before = sorted(p.name for p in project.environments_dir.iterdir())
    inherited = run(project, "init", "eu", "--extends", "dev")
    assert inherited.exit_code == 2
    assert "environment eu would inherit argocd.destination from environment dev" in inherited.stderr
    assert "help: pass --destination URL|NAME" in inherited.stderr
    shared = run(project, "init", "eu", "--extends", "base", "--namespace", "ray-demo")
    assert shared.exit_code == 2
    assert ("would deploy to the same cluster (https://kubernetes.default.svc) and namespaces (ray-demo)"
            in shared.stderr)
    assert sorted(p.name for p in project.environments_dir.iterdir()) == before  # nothing written


def test_init_refuses_what_it_cannot_write_and_leaves_nothing(project: Project):
    before = sorted(p.name for p in project.environments_dir.iterdir())
    for args, words in ((("dev", "--extends", "base"), "environments/dev.yaml already exists"),
                        (("Staging_1", "--extends", "base"), "'Staging_1' is not a usable environment name"),
                        (("staging", "--extends", "bsae"), "did you mean --extends base?"),
                        (("staging", "--extends", "base", "--namespace", "Bad_NS"), "is not a valid Kubernetes name")):
        result = run(project, "init", *args)
        assert result.exit_code == 2, (args, result.output)
        assert words in result.stderr, result.stderr
    assert sorted(p.name for p in project.environments_dir.iterdir()) == before


def test_explain_shows_values_defaults_and_rendered_fields(project: Project):
    set_value = run(project, "explain", "dev", "clusters[ray-cpu-demo].workerGroups[cpu].maxReplicas")
    assert set_value.exit_code == 0, set_value.output
    lines = set_value.stdout.splitlines()
    assert lines[0] == "dev: clusters[ray-cpu-demo].workerGroups[cpu].maxReplicas = 2"
    assert lines[-1] == "  set at environments/dev.yaml:28:9"
    dotted = run(project, "explain", "dev", "clusters.ray-cpu-demo.workerGroups.cpu.maxReplicas")
    assert dotted.stdout == set_value.stdout
    default = run(project, "explain", "dev", "clusters[ray-cpu-demo].workerGroups[cpu].gpu", "--format", "json")
    assert default.exit_code == 0, default.output
    data = json.loads(default.stdout)
    assert (data["value"], data["origin"], data["setBy"]) == (0, "default", [])
    rendered = json.loads(run(project, "explain", "dev", "RayCluster/ray-cpu-demo:spec.workerGroupSpecs[0].maxReplicas",
                              "--format", "json").stdout)
    assert rendered == {"environment": "dev", "path": "RayCluster/ray-demo/ray-cpu-demo:spec.workerGroupSpecs[0]."
                        "maxReplicas", "value": 2, "origin": "rendered", "setBy": ["environments/dev.yaml:28:9"],
                        "template": "templates/objects/rayclusters.jsonnet", "description": None}
    layered = json.loads(run(project, "explain", "prod-eks-gpu", "operator.chart.version", "--format", "json").stdout)
    assert [s.split(":")[0] for s in layered["setBy"]] == ["environments/base.yaml", "environments/prod-eks-gpu.yaml"]


def test_rules_prints_a_policy_and_lists_policies(project: Project):
    listing = run(project, "rules")
    assert listing.exit_code == 0
    assert re.search(r"^policy/dev-no-gpu\s+error\s+Development environments", listing.stdout, re.M)
    assert re.search(r"^raycluster/worker-replicas\s+error", listing.stdout, re.M)
    policy = run(project, "rules", "policy/dev-no-gpu")
    assert policy.exit_code == 0, policy.output
    assert policy.stdout.startswith("policy/dev-no-gpu  (error; CUE policy policies/dev-no-gpu.cue")
    assert policy.stdout.endswith((project.policies_dir / "dev-no-gpu.cue").read_text())
    escape = run(project, "rules", "policy/../environments/dev")
    assert escape.exit_code == 2 and "no policy" in escape.stderr


def test_help_follows_the_workflow_and_every_command_has_an_example(project: Project):
    result = run(project, "--help")
    commands = re.findall(r"^  ([a-z-]+)\s{2,}", result.stdout.split("Commands:")[1], re.M)
    assert commands[:8] == ["init", "envs", "explain", "render", "show", "diff", "golden", "check"]
    assert "krc diff" in result.stdout and "_KRC_COMPLETE=bash_source krc" in result.stdout
    for command in commands:
        if command == "argocd":
            continue
        text = run(project, command, "--help").stdout
        assert re.search(r"Examples?:\n\s+krc ", text), command


def _completions(project: Project, args: list[str], incomplete: str) -> list[str]:
    completer = ShellComplete(main, {}, "krc", "_KRC_COMPLETE")
    return [c.value for c in completer.get_completions(["--project", str(project.root), *args], incomplete)]


def test_completion_offers_environments_rule_ids_and_formats(project: Project):
    assert _completions(project, ["render"], "") == ["dev", "prod-eks-gpu"]
    assert _completions(project, ["show"], "pr") == ["prod-eks-gpu"]
    assert _completions(project, ["init", "x", "--extends"], "b") == ["base"]
    assert "policy/dev-no-gpu" in _completions(project, ["rules"], "policy/")
    assert "raycluster/worker-replicas" in _completions(project, ["rules"], "raycluster/w")
    assert _completions(project, ["lint", "--format"], "") == ["text", "json", "sarif", "github"]


def test_progress_appears_on_a_terminal_only():
    master, slave = os.openpty()
    with os.fdopen(slave, "w") as terminal:
        with progress(terminal, "linting"):
            pass
    seen = b""
    while select.select([master], [], [], 2)[0] and len(seen) < len(b"linting...\r\x1b[K"):
        seen += os.read(master, 100)
    os.close(master)
    assert seen == b"linting...\r\x1b[K"
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as pipe:
        with progress(pipe, "linting"):
            pass
    with os.fdopen(read_end) as reader:
        assert reader.read() == ""


def test_plurals():
    assert [plural(n, "error") for n in (0, 1, 2)] == ["0 errors", "1 error", "2 errors"]
    assert plural(3, "policy") == "3 policies" and plural(1, "policy") == "1 policy"
    assert summary([Problem("a"), Problem("b", severity="warning")]) == "1 error, 1 warning"
    assert summary([]) == "no problems"


def test_every_schema_property_has_a_description():
    missing: list[str] = []

    def walk(node: object, where: str) -> None:
        if not isinstance(node, dict):
            return
        for key, child in (node.get("properties") or {}).items():
            if "description" not in child:
                missing.append(f"{where}.{key}")
            walk(child, f"{where}.{key}")
        for key in ("items", "additionalProperties"):
            walk(node.get(key), f"{where}[]")
        for key in ("anyOf", "oneOf", "allOf"):
            for branch in node.get(key) or []:
                walk(branch, where)

    schema = environment_schema()
    walk(schema, "")
    for name, definition in schema["$defs"].items():
        walk(definition, f"$defs.{name}")
    assert missing == []
    worker = schema["$defs"]["workerGroup"]["properties"]
    assert worker["minReplicas"]["default"] == 0 and worker["maxReplicas"]["examples"] == [4]


def test_pre_commit_hooks_run_existing_commands_on_the_whole_project():
    hooks = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text())
    assert [h["id"] for h in hooks] == ["krc-check", "krc-lint"]
    for hook in hooks:
        command = hook["entry"].split()
        assert command[0] == "krc" and command[1] in main.list_commands(click.Context(main))
        assert hook["pass_filenames"] is False and hook["language"] == "python"


def test_lint_on_a_terminal_shows_the_line_and_the_fix_in_colour(project_without_policies: Project):
    project = project_without_policies  # about the terminal, not policies: no CUE engine run
    dev = project.environment_file("dev")
    dev.write_text(dev.read_text() + "jobs:\n  - name: train\n    entrypoint: python train.py\n")
    krc = Path(sys.executable).parent / "krc"
    master, slave = os.openpty()
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")} | {"TERM": "xterm"}
    process = subprocess.Popen([str(krc), "--project", str(project.root), "lint", "dev"], stdout=slave,
                               stderr=slave, env=environ)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal closed: the process ended
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    assert process.wait(timeout=120) == 1
    text = seen.decode()
    assert "\x1b[1;31merror:\x1b[0m neither cluster nor clusterSelector is set" in text
    assert "\x1b[2m|\x1b[0m   - name: train" in text and "\x1b[1;32mhelp:\x1b[0m add cluster" in text
    plain = run(project, "lint", "dev")  # not a terminal: one line per finding, no colour
    assert plain.stdout.count("\n") == 1 and "\x1b[" not in plain.stdout
