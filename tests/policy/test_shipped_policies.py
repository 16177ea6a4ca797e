"""The shipped policies on the shipped environments, on mutated ones, and through `krc policy`."""
from __future__ import annotations

import copy
import re

import pytest
from click.testing import CliRunner

from compiler.cli import main
from compiler.pipeline import compile_environments
from compiler.policy import PolicyInput, evaluate_policies, policy_input

SHIPPED = {"prod-gpu-limit", "prod-job-deadline", "image-registry", "dev-no-gpu"}


def _mutated(base: PolicyInput, name: str, change) -> PolicyInput:
    environment, objects = copy.deepcopy(base.environment), copy.deepcopy(list(base.objects))
    change(environment, objects)
    return PolicyInput(name, {**environment, "name": name}, tuple(objects), base.locate)


def _group(environment: dict, cluster: str, group: str) -> dict:
    found = next(c for c in environment["clusters"] if c["name"] == cluster)
    return next(g for g in found["workerGroups"] if g["name"] == group)


def _more_gpus(environment, objects):
    _group(environment, "ray-gpu-train", "gpu-a10g-x4")["maxReplicas"] = 6


def _no_deadline(environment, objects):
    job = next(o for o in objects if o["kind"] == "RayJob")
    del job["spec"]["activeDeadlineSeconds"]


def _foreign_image(environment, objects):
    environment["ray"]["image"] = "docker.io/someone/ray:2.58.0"


def _gpu_in_dev(environment, objects):
    _group(environment, "ray-cpu-demo", "cpu")["gpu"] = 1


MUTATIONS = {  # policy -> (environment mutated, change, what the finding must say)
    "prod-gpu-limit": ("prod-eks-gpu", _more_gpus, r"totalGpus: invalid value 39 \(out of bound <=32\)"),
    "prod-job-deadline": ("prod-eks-gpu", _no_deadline,
                          r"objects\[RayJob/train-resnet\]\.spec\.activeDeadlineSeconds: missing"),
    "image-registry": ("prod-eks-gpu", _foreign_image,
                       r'env\.ray\.image: invalid value "docker\.io/someone/ray:2\.58\.0" \(out of bound =~'),
    "dev-no-gpu": ("dev", _gpu_in_dev,
                   r"env\.clusters\[ray-cpu-demo\]\.workerGroups\[cpu\]\.gpu: conflicting values (1 and 0|0 and 1)"),
}


def _job_on_existing_cluster(environment, objects):
    environment.setdefault("jobs", []).append(
        {"name": "adhoc", "entrypoint": "python x.py", "clusterSelector": {"ray.io/cluster": "ray-cpu-demo"}})


def _multi_host_gpus(environment, objects):
    _group(environment, "ray-gpu-train", "gpu-a10g-x4")["numOfHosts"] = 3


EXTRA_CASES = {  # name -> (environment mutated, change, policy expected to fail or None, what it must say)
    "dev-job-on-existing-cluster": ("dev", _job_on_existing_cluster, None, ""),
    "prod-job-on-existing-cluster": ("prod-eks-gpu", _job_on_existing_cluster, None, ""),
    "prod-multi-host-gpus": ("prod-eks-gpu", _multi_host_gpus, "prod-gpu-limit",
                             r"totalGpus: invalid value 39 \(out of bound <=32\)"),
}


@pytest.fixture(scope="module")
def batch(shipped_project, engine):
    """One engine run over the shipped environments and one mutated copy per policy."""
    shipped = {r.environment.name: policy_input(r)
               for r in compile_environments(shipped_project, shipped_project.environment_names())}
    mutated = [_mutated(shipped[env], f"mutated-for-{policy}", change)
               for policy, (env, change, _) in MUTATIONS.items()]
    mutated += [_mutated(shipped[env], f"case-{name}", change) for name, (env, change, _, _) in EXTRA_CASES.items()]
    problems = evaluate_policies(shipped_project.policies_dir, [*shipped.values(), *mutated], engine=engine,
                                 show_path=shipped_project.relative)
    return shipped, problems


def test_every_shipped_policy_is_exercised():
    assert set(MUTATIONS) == SHIPPED


def test_shipped_environments_pass(batch):
    shipped, problems = batch
    assert sorted(shipped) == ["dev", "prod-eks-gpu"]
    assert [p.one_line() for p in problems if "mutated-for-" not in p.message and "case-" not in p.message] == []


@pytest.mark.parametrize("case", sorted(EXTRA_CASES))
def test_policies_follow_the_environment_model(batch, case):
    """A job on an existing cluster defines no cluster; a multi-host replica is numOfHosts Pods."""
    _, problems = batch
    _, _, policy, pattern = EXTRA_CASES[case]
    mine = [p for p in problems if f"environment case-{case}:" in p.message]
    if policy is None:
        assert mine == [], [p.one_line() for p in mine]
    else:
        assert {p.rule for p in mine} == {f"policy/{policy}"} and any(re.search(pattern, p.message) for p in mine)


@pytest.mark.parametrize("policy", sorted(SHIPPED))
def test_mutated_environment_fails_with_a_clear_message(batch, policy):
    _, problems = batch
    mine = [p for p in problems if f"environment mutated-for-{policy}:" in p.message]
    assert {p.rule for p in mine} == {f"policy/{policy}"}, [p.one_line() for p in mine]
    assert any(re.search(MUTATIONS[policy][2], p.message) for p in mine), [p.one_line() for p in mine]
    assert all(f"policy policies/{policy}.cue:" in p.message for p in mine)


def _policy(project, name: str, text: str) -> None:
    (project.policies_dir / f"{name}.cue").write_text(text, encoding="utf-8")


def test_policy_with_a_syntax_error_is_an_input_error_naming_file_and_line(project, engine):
    _policy(project, "broken", "package policy\n\nenv: {\n\tproduction: bool\n\n")
    result = CliRunner().invoke(main, ["--project", str(project.root), "policy"])
    assert result.exit_code == 2, result.output
    assert re.search(r"^policies/broken\.cue:\d+:\d+: error: CUE cannot evaluate this policy: expected",
                     result.stderr, re.M), result.stderr
    assert "dev-no-gpu" not in result.stderr  # only the broken policy is blamed


def test_policy_without_package_clause_is_an_input_error(project):
    _policy(project, "nopackage", "// no package\nenv: production: bool\n")
    result = CliRunner().invoke(main, ["--project", str(project.root), "policy"])
    assert result.exit_code == 2
    assert result.stderr.startswith("policies/nopackage.cue:1:1: error: a policy file starts with a package clause")


def test_conflict_names_the_policy_line_and_the_environment_line(project, engine):
    env_file = project.environments_dir / "dev.yaml"
    text = env_file.read_text().replace("        cpu: 1\n        memory: 2Gi\n",
                                        "        cpu: 1\n        memory: 2Gi\n        gpu: 2\n")
    text = text.replace("cpuOnly: true", "cpuOnly: false")  # else krc itself rejects the GPU request
    env_file.write_text(text)
    gpu_line = text.splitlines().index("        gpu: 2") + 1
    policy_line = (project.policies_dir / "dev-no-gpu.cue").read_text().splitlines().index(
        "\tworkerGroups?: [...{gpu?: 0}]") + 1

    result = CliRunner().invoke(main, ["--project", str(project.root), "policy", "dev"])
    assert result.exit_code == 1, result.output
    [line] = result.stdout.splitlines()
    assert re.match(f"environments/dev.yaml:{gpu_line}:9: error: environment dev: "
                    r"env\.clusters\[ray-cpu-demo\]\.workerGroups\[cpu\]\.gpu: conflicting values (2 and 0|0 and 2)",
                    line), line
    assert f"policy policies/dev-no-gpu.cue:{policy_line}:" in line
    assert line.endswith("[policy/dev-no-gpu]")
    assert "4 policies on 1 environment: 1 violation" in result.stderr


def test_clean_run_exits_zero_and_says_what_it_checked(shipped_project, engine):
    result = CliRunner().invoke(main, ["--project", str(shipped_project.root), "policy"])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert result.stderr.strip() == "4 policies on 2 environments: 0 violations"
