"""Property tests: random environment documents, valid and invalid, never produce a traceback and always exit 0
or 2; those that render, render byte-identically twice."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from security_support import copy_tree, run

from compiler.output import folders
from compiler.project.paths import Project

# each example renders the project: a quarter of the profile's examples (tests/conftest.py), the same ones every run
SETTINGS = settings(max_examples=max(5, settings.default.max_examples // 4), derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
TOP_KEYS = ["extends", "production", "cpuOnly", "namespace", "labels", "operator", "ray", "namespaces",
            "serviceAccounts", "clusters", "services", "jobs", "cronJobs", "lint", "argocd", "description"]
DNS_LABEL = st.from_regex(r"[a-z]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40), st.floats(allow_nan=False),
                    st.text(max_size=20), DNS_LABEL)
VALUES = st.recursive(SCALARS, lambda children: st.one_of(
    st.lists(children, max_size=4), st.dictionaries(st.one_of(st.text(max_size=10), DNS_LABEL), children,
                                                    max_size=4)), max_leaves=20)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory, rendered_template: Path) -> Project:
    root = tmp_path_factory.mktemp("properties") / "project"
    copy_tree(rendered_template, root)
    return Project(root)


def _dev_with(project: Project, document: object) -> None:
    text = document if isinstance(document, str) else yaml.safe_dump(document, allow_unicode=True)
    project.environment_file("dev").write_text(text, encoding="utf-8")


def _assert_clean_exit(project: Project) -> int:
    result = run(project.root, ["render", "dev"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code in (0, 2), result.output
    assert "Traceback" not in result.output and "internal error" not in result.output
    return result.exit_code


@SETTINGS
@given(st.dictionaries(st.one_of(st.sampled_from(TOP_KEYS), st.text(max_size=12)), VALUES, max_size=6))
def test_random_documents_exit_0_or_2(scratch: Project, document: dict):
    _dev_with(scratch, {"extends": "base", **document} if "extends" not in document else document)
    _assert_clean_exit(scratch)


@SETTINGS
@given(st.text(max_size=200))
def test_random_text_exits_0_or_2(scratch: Project, text: str):
    _dev_with(scratch, text)
    _assert_clean_exit(scratch)


GROUP = st.integers(0, 8).flatmap(lambda most: st.fixed_dictionaries({
    "name": DNS_LABEL,
    "maxReplicas": st.just(most),
    "minReplicas": st.integers(0, most),
    "cpu": st.sampled_from([1, 2, "500m", 4]),
    "memory": st.sampled_from(["1Gi", "2Gi", "512Mi", "2G"]),
}, optional={"env": st.dictionaries(st.from_regex(r"[A-Z][A-Z0-9_]{0,8}", fullmatch=True), st.text(max_size=10),
                                    max_size=3)}))
# real gates of the pinned operator mostly, and now and then any text (an error, never YAML structure)
GATE_NAMES = st.one_of(st.sampled_from(["RayClusterStatusConditions", "RayJobDeletionPolicy", "RayCronJob",
                                        "RayMultiHostIndexing"]), st.text(min_size=1, max_size=15))


@SETTINGS
@given(groups=st.lists(GROUP, min_size=1, max_size=3, unique_by=lambda g: g["name"]),
       gates=st.dictionaries(GATE_NAMES, st.booleans(), max_size=3),
       namespace=DNS_LABEL)
def test_near_valid_documents_render_deterministically(scratch: Project, groups: list, gates: dict,
                                                       namespace: str):
    document = {"extends": "base", "cpuOnly": True, "namespace": namespace,
                "operator": {"featureGates": gates},
                "clusters": [{"name": "ray-cpu-demo", "head": {"cpu": 1, "memory": "2Gi"}, "workerGroups": groups}]}
    _dev_with(scratch, document)
    if _assert_clean_exit(scratch) == 0:
        first = folders.read_tree(scratch.rendered_dir / "dev")
        shutil.rmtree(scratch.rendered_dir / "dev")
        assert _assert_clean_exit(scratch) == 0
        assert folders.read_tree(scratch.rendered_dir / "dev") == first
        values = yaml.safe_load(first["helm/kuberay-operator.values.yaml"])
        # gate names are data: whatever they hold, they never become keys of the values file
        assert set(values) <= {"fullnameOverride", "featureGates", "rbacEnable", "singleNamespaceInstall",
                               "crNamespacedRbacEnable", "watchNamespace"}
