"""Schema keywords the KubeRay CRDs do not use but users' CRDs may: checked on a small CRD written here."""
from __future__ import annotations

import copy

import pytest

from compiler.problems import KrcError
from compiler.validation import SchemaSet

SPEC = {
    "type": "object",
    "properties": {
        "payload": {"type": "string", "format": "byte"},
        "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 1, "exclusiveMaximum": True},
        "tags": {"type": "array", "maxItems": 2, "items": {"type": "string", "maxLength": 5}},
        "labels": {"type": "object", "minProperties": 1, "maxProperties": 2,
                   "additionalProperties": {"type": "string"}},
        "port": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "pattern": "^[a-z]+$"}],
                 "x-kubernetes-int-or-string": True},
        "window": {"type": "object",
                   "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
                   "x-kubernetes-validations": [
                       {"rule": "self.start < self.end",
                        "messageExpression": "'start ' + string(self.start) + ' must be before end'"},
                       {"rule": "self.end - self.start <= 10", "message": "too long", "fieldPath": ".end"},
                       {"rule": "self.start >= oldSelf.start", "message": "only moves forward"}]},
        "level": {"type": "integer", "enum": [1, 2]},
        "shape": {"type": "object", "enum": [{"a": 1}], "x-kubernetes-preserve-unknown-fields": True},
        "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                     "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}},
    },
}
CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "gadgets.example.com"},
       "spec": {"group": "example.com", "names": {"kind": "Gadget", "plural": "gadgets"}, "scope": "Namespaced",
                "versions": [
                    {"name": "v2", "served": True, "storage": True,
                     "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": SPEC}}}},
                    {"name": "v1", "served": True, "storage": False, "deprecated": True,
                     "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}},
                    {"name": "v0", "served": False, "storage": False,
                     "schema": {"openAPIV3Schema": {"type": "object"}}}]}}


def check(spec: dict, version: str = "v2") -> list[tuple[str, str]]:
    document = {"apiVersion": f"example.com/{version}", "kind": "Gadget", "metadata": {"name": "g"}, "spec": spec}
    return [(p.rule, p.path) for p in SchemaSet.from_crds([CRD]).validate(document).problems]


@pytest.mark.parametrize("spec, expected", [
    ({"payload": "aGVsbG8="}, []),
    ({"payload": "not base64!"}, [("schema/format", "spec.payload")]),
    ({"ratio": 0.5}, []),
    ({"ratio": 0}, [("schema/bounds", "spec.ratio")]),
    ({"ratio": 1}, [("schema/bounds", "spec.ratio")]),
    ({"tags": ["a", "b", "c"]}, [("schema/bounds", "spec.tags")]),
    ({"tags": ["toolong"]}, [("schema/bounds", "spec.tags[0]")]),
    ({"labels": {}}, [("schema/bounds", "spec.labels")]),
    ({"labels": {"a": "1", "b": "2", "c": "3"}}, [("schema/bounds", "spec.labels")]),
    ({"level": 2}, []),
    ({"level": 3}, [("schema/enum", "spec.level")]),
    ({"level": True}, [("schema/type", "spec.level")]),
    ({"shape": {"a": 1}}, []),
    ({"shape": {"a": 2}}, [("schema/enum", "spec.shape")]),
    ({"port": 8080}, []),
    ({"port": "http"}, []),
    ({"port": 0}, [("schema/any-of", "spec.port")]),
    ({"port": "HTTP"}, [("schema/any-of", "spec.port")]),
    ({"window": {"start": 1, "end": 5}}, []),
    ({"window": {"start": 1, "end": 50}}, [("schema/cel", "spec.window.end")]),
    ({"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}},
                   "spec": {"size": 1}}}, []),
    ({"template": {"spec": {"size": 1}}}, [("schema/required", "spec.template.apiVersion"),
                                           ("schema/required", "spec.template.kind")]),
    ({"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"nme": "p"}}},
     [("schema/unknown-field", "spec.template.metadata.nme")]),
])
def test_keyword(spec, expected):
    assert check(spec) == expected


def test_message_expression_gives_the_message():
    document = {"apiVersion": "example.com/v2", "kind": "Gadget", "metadata": {"name": "g"},
                "spec": {"window": {"start": 7, "end": 3}}}
    (problem,) = SchemaSet.from_crds([CRD]).validate(document).problems
    assert problem.message == "start 7 must be before end"


def test_deprecated_without_warning_text_and_unserved_versions():
    assert check({"anything": 1}, "v1") == [("schema/deprecated-version", "apiVersion")]
    document = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}}
    (problem,) = SchemaSet.from_crds([CRD]).validate(document).problems
    assert problem.message == "example.com/v1 Gadget is deprecated; use example.com/v2 Gadget"
    assert check({}, "v0") == [("schema/unknown-kind", "apiVersion")]


def test_a_crd_with_a_broken_rule_is_refused_with_its_name():
    crd = copy.deepcopy(CRD)
    crd["metadata"]["name"] = "broken.example.com"
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"] = [{"rule": "self.(("}]
    with pytest.raises(KrcError, match="CRD broken.example.com version v2: CEL rule"):
        SchemaSet.from_crds([crd]).validate({"apiVersion": "example.com/v2", "kind": "Gadget",
                                             "metadata": {"name": "g"}})
