"""A chart's CRDs sent to the engine ahead (charts.crds_ahead): compiled while the environment renders, then
named by digest by the validation instead of sent again; the verdicts are the ones a CRD sent with its objects
gets."""
from __future__ import annotations

import time
from typing import Any

import pytest

from compiler.charts import crds_ahead, vendored
from compiler.native import client
from compiler.project.paths import Project
from compiler.validation import SchemaSet

CLUSTER = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "c", "namespace": "n"},
           "spec": {"headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [
               {"name": "ray-head", "image": "rayproject/ray:2.46.0", "ports": [{"containerPort": "x"}]}]}}}}}


def test_crds_sent_ahead_are_named_by_digest_and_judge_as_before(project: Project,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    chart = vendored.load_vendored_chart(project.vendor_dir, "kuberay-operator", "1.7.0")
    monkeypatch.setattr(client, "_KNOWN", {})  # nothing sent before, as in a new process
    monkeypatch.setattr(crds_ahead, "_AHEAD", {})
    schemas = SchemaSet.from_crds(chart.crds)
    sent_with_objects = schemas.validate(CLUSTER)

    monkeypatch.setattr(client, "_KNOWN", {})
    crds_ahead.send(chart.crds)
    crds_ahead.send(chart.crds)  # once per CRD and process
    assert len(crds_ahead._AHEAD) == len(chart.crds)
    deadline = time.monotonic() + 60
    while not all(p.done() for p in crds_ahead._AHEAD.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    asked: list[dict[str, Any]] = []
    real = client.Pending

    def recording(op: str, args: dict[str, Any], what: str, timeout: float) -> client.Pending:
        asked.append(args)
        return real(op, args, what, timeout)

    monkeypatch.setattr(client, "Pending", recording)
    ahead = schemas.validate(CLUSTER)
    assert [sorted(a) for a in asked] == [["crdDigest", "objects", "share"]]  # named, not sent again
    assert ahead == sent_with_objects and not ahead.ok
    assert any("containerPort" in str(p.segments) for p in ahead.problems)
