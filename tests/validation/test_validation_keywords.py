"""Schema keywords the KubeRay CRDs do not use but users' CRDs may: a small CRD written here, judged by the engine
(the API server's own validation), each error under the rule id krc gives that kind of check."""
from __future__ import annotations

import copy

import pytest

from compiler.diagnostics.problems import KrcError
from compiler.validation import SchemaSet

SPEC = {
    "type": "object",
    "properties": {
        "payload": {"type": "string", "format": "byte"},
        "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 1, "exclusiveMaximum": True},
        "tags": {"type": "array", "maxItems": 2, "items": {"type": "string", "maxLength": 5}},
        "labels": {"type": "object", "minProperties": 1, "maxProperties": 2,
                   "additionalProperties": {"type": "string"}},
        "port": {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True},
        "choice": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"},
                                                    "c": {"type": "string"}},
                   "oneOf": [{"required": ["a"]}, {"required": ["b"]}], "not": {"required": ["c"]}},
        "either": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                   "anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
        "both": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                 "allOf": [{"required": ["a"]}, {"required": ["b"]}]},
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
    ({"level": True}, [("schema/enum", "spec.level"), ("schema/type", "spec.level")]),
    ({"shape": {"a": 1}}, []),
    ({"shape": {"a": 2}}, [("schema/enum", "spec.shape")]),
    ({"port": 8080}, []),
    ({"port": "http"}, []),
    ({"port": 1.5}, [("schema/type", "spec.port")]),
    ({"choice": {"a": "x"}}, []),
    ({"choice": {"a": "x", "b": "y"}}, [("schema/one-of", "spec.choice")]),
    ({"choice": {"a": "x", "c": "z"}}, [("schema/not", "spec.choice")]),
    ({"either": {}}, [("schema/any-of", "spec.either"), ("schema/required", "spec.either.a")]),
    ({"either": {"b": "y"}}, []),
    ({"both": {"a": "x"}}, [("schema/all-of", "spec.both"), ("schema/required", "spec.both.b")]),
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
    assert (problem.rule, problem.path) == ("schema/cel", "spec.window")
    assert problem.message == "spec.window: Invalid value: start 7 must be before end"


def test_deprecated_without_warning_text_and_unserved_versions():
    assert check({"anything": 1}, "v1") == [("schema/deprecated-version", "apiVersion")]
    document = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}}
    (problem,) = SchemaSet.from_crds([CRD]).validate(document).problems
    assert (problem.message, problem.severity) == ("example.com/v1 Gadget is deprecated", "warning")
    assert check({}, "v0") == [("schema/unknown-kind", "apiVersion")]


def test_a_rule_that_does_not_compile_fails_every_object_as_on_the_server():
    # the engine does not run the CRD's own validation (which would refuse it): the server answers each object so
    crd = copy.deepcopy(CRD)
    crd["metadata"]["name"] = "broken.example.com"
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"] = [{"rule": "self.(("}]
    (problem,) = SchemaSet.from_crds([crd]).validate({"apiVersion": "example.com/v2", "kind": "Gadget",
                                                      "metadata": {"name": "g"}}).problems
    assert (problem.rule, problem.severity) == ("schema/cel", "error")
    assert "rule compile error" in problem.message


def test_a_crd_the_server_refuses_is_an_input_error_naming_it():
    crd = copy.deepcopy(CRD)
    crd["metadata"]["name"] = "loose.example.com"
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["port"] = {
        "anyOf": [{"type": "integer", "minimum": 1}, {"type": "string"}]}
    with pytest.raises(KrcError, match="CRD loose.example.com version v2: the schema is not structural"):
        SchemaSet.from_crds([crd]).validate({"apiVersion": "example.com/v2", "kind": "Gadget",
                                             "metadata": {"name": "g"}})
