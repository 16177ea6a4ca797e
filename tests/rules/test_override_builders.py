"""The override rules (issue 36) checked against the code they describe (issue 32, item 4): each failing case's
manifests go through KubeRay's own builders (engine/kuberay), and every `kuberay:` entry of the case (what the
operator makes of the field: builder, field, written, effective) must be what the built Pods show.

A case runs at its operator version when krc has a build of it, else at the newest build (1.6.2: the module
proxy does not serve 1.7.0's source). Where KubeRay's code contradicts what a case says, the entry is listed in
CONTRADICTED with what the code does; the test then requires the contradiction to still hold, so a fixed rule
(or case) fails here until its entry goes.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from test_kuberay_agreement import _at_built_version, _gates_arg
from test_rule_cases import context_for

from compiler.documents.yamlio import load
from compiler.lint.runner import validate_objects
from compiler.native import kuberay
from compiler.rules.kuberay_validator import as_stored

CASES_DIR = Path(__file__).parent / "cases"
RULES = ("raycluster/replicas-clamped", "raycluster/reserved-pod-labels", "raycluster/forced-start-params",
         "raycluster/false-start-param-dropped", "raycluster/memory-request-ignored",
         "raycluster/pod-template-identity", "raycluster/operator-env-vars", "rayjob/cluster-selector-ignores-spec")
_GROUP = re.compile(r"workerGroupSpecs\[(\d+)\]")
_PARAM = re.compile(r"rayStartParams\['([^']+)'\]")
_LABEL = re.compile(r"labels\['([^']+)'\]")
_ENV = re.compile(r"env\[([A-Za-z_0-9]+)\]")


# (rule, case name, field) -> what KubeRay's code does instead (read at 1.5.2 and 1.6.2)
CONTRADICTED: dict[tuple[str, str, str], str] = {
    # none now: autoscaler-v2-restart-policy (refused by ValidateRayClusterSpec, not overridden) is gone, and
    # pod-template-identity no longer reports the head template's name (DefaultHeadPodTemplate keeps it)
}


def _failing_cases() -> list:
    found = []
    for rule_id in RULES:
        path = CASES_DIR / (rule_id.replace("/", "__") + ".yaml")
        for case in load(path.read_text(encoding="utf-8"), str(path))["cases"]:
            if case.get("expect"):
                entries = case["kuberay"] if isinstance(case["kuberay"], list) else [case["kuberay"]]
                found.append(pytest.param(rule_id, case, entries, id=f"{rule_id}: {case['name']}"))
    return found


def _pods(answer: dict[str, Any], entry: dict[str, Any]) -> list[dict[str, Any]]:
    """The Pods an entry is about: the head's, one worker group's, or every worker's."""
    pods = [g for c in answer["clusters"] for g in c["pods"]]
    field, builder = str(entry["field"]), str(entry["builder"])
    group = _GROUP.search(field)
    if "headGroupSpec" in field or "Head" in builder:
        return [g for g in pods if g["type"] == "head"]
    if group:
        workers = [g for g in pods if g["type"] == "worker"]
        return workers[int(group.group(1)):int(group.group(1)) + 1]
    return pods


def _env_matches(env: dict[str, Any], effective: str) -> bool:
    if effective.endswith(" (fieldRef)"):
        return ((env.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath") == effective[:-len(" (fieldRef)")]
    head, _, tail = effective.partition("...")
    value = str(env.get("value"))
    return value.startswith(head) and value.endswith(tail) if "..." in effective else value == effective


def _shows(group: dict[str, Any], entry: dict[str, Any]) -> bool:
    """Whether one built Pod shows the entry's effective value."""
    field, effective, pod = str(entry["field"]), str(entry["effective"]), group["pod"]
    container = pod["spec"]["containers"][0]
    command = " ".join(container.get("args") or [])
    if field.endswith(".replicas"):
        return str(group["desired"]) == effective
    if (param := _PARAM.search(field)) is not None:
        flag = f"--{param.group(1)}"
        if effective == "flag absent from ray start":
            return flag not in command
        return f" {flag} " in f" {command} " or f"{flag}={effective}" in command
    if (label := _LABEL.search(field)) is not None and field.startswith("Pod metadata"):
        return (pod["metadata"].get("labels") or {}).get(label.group(1)) == effective
    if (env := _ENV.search(field)) is not None:
        return any(e["name"] == env.group(1) and _env_matches(e, effective) for e in container.get("env") or [])
    if field.endswith("restartPolicy"):
        return pod["spec"].get("restartPolicy") == effective
    if field.endswith("resources.requests.memory"):
        return "--memory" not in command
    if field.endswith("template.metadata.name"):
        prefix = effective.split("<random>")[0]
        return not pod["metadata"].get("name") and pod["metadata"].get("generateName") == prefix
    if field.endswith("template.metadata.namespace"):
        return pod["metadata"].get("namespace") == effective
    raise AssertionError(f"no way to read {field!r} off a Pod: teach this test")


@pytest.mark.parametrize(("rule_id", "case", "entries"), _failing_cases())
def test_kuberays_builders_do_what_the_rule_says(rule_id: str, case: dict, entries: list, tmp_path: Path) -> None:
    case = _at_built_version(case)
    manifest = tmp_path / "case.yaml"
    manifest.write_text(case["manifests"], encoding="utf-8")
    context = context_for(case, manifest)
    defaulted, _ = validate_objects(context)
    objects = defaulted.kuberay_objects()
    answers = kuberay.build(case["operator"], {"args": _gates_arg(context.feature_gates), "env": []},
                            [as_stored(o.document) for o in objects])
    for entry in entries:
        effective = str(entry["effective"])
        if effective.startswith("no cluster created"):
            skipped = [a for a in answers if not a["clusters"] and "clusterSelector" in str(a.get("skipped"))]
            assert skipped, f"{entry}: KubeRay {case['operator']} built a cluster: {answers}"
            continue
        refusals = [r["message"] for a in answers for r in a["refusals"]]
        shown = [g for a in answers for g in _pods(a, entry) if _shows(g, entry)]
        if (rule_id, case["name"], entry["field"]) in CONTRADICTED:
            assert not shown, f"{entry}: KubeRay now does what the case says; remove it from CONTRADICTED"
            continue
        assert shown, (f"{entry}: no Pod KubeRay {case['operator']} builds shows {effective!r}"
                       + (f" (it refuses: {refusals})" if refusals else ""))
