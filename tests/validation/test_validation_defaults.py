"""Defaults as the API server applies them, on the real 1.7.0 CRDs and on a small CRD written for the test."""
from __future__ import annotations

import copy

from validation_support import cluster, job, kuberay_schemas

from compiler.validation import SchemaSet

WIDGET_SCHEMA = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "properties": {
                "settings": {"type": "object", "default": {},
                             "properties": {"mode": {"type": "string", "default": "fast"},
                                            "level": {"type": "integer", "default": 3}}},
                "pools": {"type": "object",
                          "additionalProperties": {"type": "object",
                                                   "properties": {"size": {"type": "integer", "default": 1}}}},
                "steps": {"type": "array", "items": {"type": "object", "required": ["name"],
                                                     "properties": {"name": {"type": "string"},
                                                                    "retries": {"type": "integer", "default": 2}}}},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                          "properties": {"known": {"type": "integer"}}},
                "note": {"type": "string", "nullable": True},
                "count": {"type": "integer", "default": 5},
            },
        },
    },
}


def widget_crd(schema: dict = WIDGET_SCHEMA) -> dict:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"},
                     "scope": "Namespaced",
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": copy.deepcopy(schema)}}]}}


def widget(spec: dict) -> dict:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec}


def test_rayjob_defaults_from_the_170_crd():
    result = kuberay_schemas("1.7.0").validate(job())
    spec = result.defaulted["spec"]
    assert spec["submissionMode"] == "K8sJobMode"
    assert spec["backoffLimit"] == 0
    assert spec["ttlSecondsAfterFinished"] == 0
    worker = spec["rayClusterSpec"]["workerGroupSpecs"][0]
    assert (worker["numOfHosts"], worker["priority"]) == (1, 0)
    assert worker["minReplicas"] == 0 and worker["maxReplicas"] == 2  # given values are kept


def test_defaults_inside_list_items_and_the_input_is_not_modified():
    document = cluster()
    del document["spec"]["workerGroupSpecs"][0]["maxReplicas"]
    document["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 6379}]
    before = copy.deepcopy(document)
    result = kuberay_schemas("1.7.0").validate(document)
    assert document == before
    assert result.defaulted["spec"]["workerGroupSpecs"][0]["maxReplicas"] == 2147483647
    port = result.defaulted["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["ports"][0]
    assert port == {"containerPort": 6379, "protocol": "TCP"}


def test_170_only_default_is_absent_with_162():
    worker = kuberay_schemas("1.6.2").validate(job()).defaulted["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    assert "priority" not in worker and worker["numOfHosts"] == 1


def test_object_default_gets_its_nested_defaults():
    result = SchemaSet.from_crds([widget_crd()]).validate(widget({}))
    assert result.problems == ()
    assert result.defaulted["spec"] == {"settings": {"mode": "fast", "level": 3}, "count": 5}


def test_defaults_in_additional_properties_and_items():
    spec = {"pools": {"a": {}, "b": {"size": 4}}, "steps": [{"name": "x"}, {"name": "y", "retries": 0}]}
    defaulted = SchemaSet.from_crds([widget_crd()]).validate(widget(spec)).defaulted["spec"]
    assert defaulted["pools"] == {"a": {"size": 1}, "b": {"size": 4}}
    assert defaulted["steps"] == [{"name": "x", "retries": 2}, {"name": "y", "retries": 0}]


def test_null_takes_the_default_nullable_keeps_null_and_unknown_fields_are_pruned():
    spec = {"count": None, "note": None, "colour": "red", "extra": {"known": 1, "anything": {"goes": True}}}
    result = SchemaSet.from_crds([widget_crd()]).validate(widget(spec))
    assert [(p.rule, p.path) for p in result.problems] == [("schema/unknown-field", "spec.colour")]
    defaulted = result.defaulted["spec"]
    assert defaulted["count"] == 5 and defaulted["note"] is None and "colour" not in defaulted
    assert defaulted["extra"] == {"known": 1, "anything": {"goes": True}}


def test_preserve_unknown_fields_still_checks_declared_properties():
    result = SchemaSet.from_crds([widget_crd()]).validate(widget({"extra": {"known": "one"}}))
    assert [(p.rule, p.path) for p in result.problems] == [("schema/type", "spec.extra.known")]


def test_required_is_checked_after_defaulting():
    schema = copy.deepcopy(WIDGET_SCHEMA)
    schema["properties"]["spec"]["required"] = ["count"]
    assert SchemaSet.from_crds([widget_crd(schema)]).validate(widget({})).problems == ()
