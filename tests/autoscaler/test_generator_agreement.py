"""Agreement on real input: krc's Ray-view capacity equals what Ray's own generator says, cluster by cluster.

The reference side runs the generator of Ray 2.58.0 in its own environment with a script written here (not krc's
runner), over the RayCluster specs of the 94 upstream samples and of both environments, as the API server
stores them (CRD defaults applied), and sums each node type's resources at max scale (the head once, workers
times max_workers). krc's side is what `krc diff` and `krc autoscaler` report: the review's Ray view.
"""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from compiler import pipeline
from compiler.autoscaler import Batch, autoscaler_views
from compiler.k8s.ray_cluster_specs import cluster_specs
from compiler.lint.manifest_files import paths_context
from compiler.lint.runner import run_rules, validate_objects
from compiler.review.ray_view import RayCapacity, cluster_rows, ray_capacity, two_views
from compiler.rules.support.context import LintContext, LintObject

RAY_VERSION = "2.58.0"
REFERENCE = """
import json, sys
from ray.autoscaler._private.kuberay.autoscaling_config import _derive_autoscaling_config_from_ray_cr as derive
out = {}
for name, cluster in json.load(sys.stdin).items():
    try:
        config = derive(cluster)
    except Exception as err:
        out[name] = {"error": type(err).__name__}
        continue
    total = {}
    for node_name, node in config["available_node_types"].items():
        count = 1 if node_name == config["head_node_type"] else node["max_workers"]
        for resource, amount in node["resources"].items():
            total[resource] = total.get(resource, 0) + amount * count
    out[name] = {"total": total}
json.dump(out, sys.stdout)
"""


def _python() -> Path:
    return Path(os.environ["KRC_RAY_ENVS"]) / RAY_VERSION / "bin" / "python"


def reference_totals(clusters: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    done = subprocess.run([str(_python()), "-I", "-c", REFERENCE], input=json.dumps(clusters), capture_output=True,
                          text=True, check=True, timeout=600)
    result: dict[str, dict[str, Any]] = json.loads(done.stdout)
    return result


def _as_totals(capacity: RayCapacity) -> dict[str, int]:
    totals = {"CPU": capacity.cpus, "memory": capacity.memory_bytes, "GPU": capacity.gpus, **dict(capacity.custom)}
    return {k: v for k, v in totals.items() if v}


def _compare(groups: dict[str, list[dict[str, Any]]]) -> int:
    """krc's Ray view of every cluster spec in each group of documents (a file, an environment: object names are
    unique within one) against the reference; the number of cluster specs compared."""
    labels = sorted(groups)
    views = autoscaler_views(Path.cwd(), [Batch(RAY_VERSION, tuple(groups[label])) for label in labels])
    clusters, ours = {}, {}
    for label, view in zip(labels, views, strict=True):
        assert not view.unavailable
        for document in groups[label]:
            for path, spec in cluster_specs(document):
                name = f"{label} {document['kind']}/{document['metadata'].get('name')} {'.'.join(path)}"
                config = view.config_for(document, path)
                assert config is not None, name
                if "workerGroupSpecs" not in spec and spec.get("enableInTreeAutoscaling") is not True:
                    spec = {**spec, "workerGroupSpecs": []}  # head-only: Ray's view of a fixed-size head
                clusters[name] = {"apiVersion": "ray.io/v1", "kind": "RayCluster",
                                  "metadata": {"name": "c", "namespace": "default"}, "spec": spec}
                ours[name] = {"error": config.error.split(":")[0]} if config.error else {
                    "total": _as_totals(ray_capacity(config))}
    reference = reference_totals(clusters)
    for name in clusters:
        want = reference[name]
        if "total" in want:
            want = {"total": {k: v for k, v in want["total"].items() if v}}
        assert ours[name] == want, name
    return len(clusters)


@pytest.fixture(scope="module")
def stored_samples(shared_dir: Path) -> tuple[LintContext, dict[str, list[LintObject]]]:
    """The upstream samples as the API server stores them, and their objects by file."""
    samples = shared_dir / "kuberay" / "samples"
    context = paths_context([samples], "1.7.0", "", samples)
    assert len({o.location.file for o in context.objects}) == 94
    defaulted, _ = validate_objects(context)
    by_file: dict[str, list[LintObject]] = {}
    for obj in defaulted.objects:
        by_file.setdefault(obj.location.file, []).append(obj)
    return defaulted, by_file


def test_every_upstream_sample_agrees_with_the_generator(stored_samples) -> None:
    _, by_file = stored_samples
    documents = {file: [o.document for o in objects] for file, objects in by_file.items()}
    assert _compare(documents) == 88  # every RayCluster spec of the samples, nested ones included


def test_the_autoscaler_rules_are_quiet_on_the_upstream_samples(stored_samples) -> None:
    """The reference corpus has no autoscaler problems: at most notes (the default idle timeout)."""
    defaulted, by_file = stored_samples
    files = sorted(by_file)
    views = autoscaler_views(Path.cwd(), [Batch(RAY_VERSION, tuple(o.document for o in by_file[f])) for f in files])
    found = []
    for file, view in zip(files, views, strict=True):
        context = dataclasses.replace(defaulted, objects=tuple(by_file[file]), autoscaler=view)
        found += [p for p in run_rules(context) if p.rule.startswith("autoscaler/")]
    assert [p.one_line() for p in found if p.severity != "info"] == []
    assert {p.rule for p in found} == {"autoscaler/idle-timeout-default"} and len(found) == 3


def test_both_environments_agree_with_the_generator_and_the_review_total_is_the_sum(project) -> None:
    """Both environments in one reference run (Ray's generator costs about a second of CPU to start)."""
    validated = {name: pipeline.validate_render(pipeline.compile_environment(project, name))
                 for name in ("dev", "prod-eks-gpu")}
    documents = {name: [o.document for o in v.context.objects] for name, v in validated.items()}
    assert _compare(documents) == 1 + 4  # dev's cluster; prod-eks-gpu's cluster, service, job and cron job
    for name, each in validated.items():
        # the review's environment total is the sum of the per-cluster figures the reference agreed with
        [view] = pipeline.autoscaler_of(project, [each])
        views = two_views(documents[name], view)
        total = RayCapacity()
        for cluster in cluster_rows(documents[name], view):
            total += ray_capacity(cluster.config)
        assert views.ray == total and views.ray.cpus > 0, name
        assert views.failed == (), name
