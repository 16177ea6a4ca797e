"""The compiled yes/no check (validation/quick_validity) agrees with jsonschema on every document: a "yes" is
trusted without running the full validator, so a disagreement would hide a finding."""
from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
import referencing
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from project_support import FIXTURE_PROJECT, REPO_ROOT

from compiler.documents.quick_validity import TYPE_PREDICATES, compile_validity, pointer_lookup
from compiler.environment import layering, schema, schema_report
from compiler.validation import kubernetes_schema_errors, kubernetes_schemas

SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow])  # examples: the profile's (tests/conftest.py)
VERSION = "1.33"


def _golden_objects() -> list[dict[str, Any]]:
    """Every plain Kubernetes object of the fixture project's golden files: the chart's and krc's own."""
    found = []
    for path in sorted((FIXTURE_PROJECT / "golden").rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if isinstance(doc, dict) and kubernetes_schemas.knows(VERSION, doc):
                found.append(doc)
    return found


OBJECTS = _golden_objects()


def _full_says_valid(document: dict[str, Any], version: str = VERSION) -> bool:
    validator = kubernetes_schema_errors.full_validator(version, document["apiVersion"], document["kind"])
    assert validator is not None
    return not any(True for _ in validator.iter_errors(document))


def _quick(document: dict[str, Any], version: str = VERSION) -> bool:
    check = kubernetes_schemas._quick_check(version, document["apiVersion"], document["kind"])
    assert check is not None, f"{document['kind']} does not compile"
    return check(document)


def test_the_golden_objects_cover_the_kinds_krc_and_the_chart_render():
    kinds = {doc["kind"] for doc in OBJECTS}
    assert {"Namespace", "ServiceAccount", "Deployment", "Role", "RoleBinding", "Service"} <= kinds


@pytest.mark.parametrize("version", kubernetes_schemas.supported_versions())
def test_every_golden_object_is_valid_by_both_in_every_version(version: str):
    for document in OBJECTS:
        assert _quick(document, version) == _full_says_valid(document, version) is True


def test_the_type_predicates_are_jsonschemas():
    checker = jsonschema.Draft202012Validator.TYPE_CHECKER
    values = [None, True, False, 0, 1, -5, 2**70, 1.0, 1.5, float("nan"), "", "1", [], [1], {}, {"a": 1}]
    for name, predicate in TYPE_PREDICATES.items():
        assert [predicate(v) for v in values] == [checker.is_type(v, name) for v in values], name


def test_what_it_does_not_compile_is_left_to_the_full_validator():
    registry = pointer_lookup()
    assert compile_validity({"type": "string", "pattern": "^a"}, registry) is None
    assert compile_validity({"enum": [[1], "a"]}, registry) is None
    assert compile_validity({"properties": {"a": {}}, "patternProperties": {"^x": {}}}, registry) is None
    check = compile_validity({"additionalProperties": False, "required": ["a"], "oneOf": [{"type": "object"},
                                                                                       {"type": "object"}]},
                             registry)
    assert check is not None and not check({"a": 1})  # oneOf: both options match, so not exactly one


def test_enums_compare_as_jsonschema_compares():
    schema_ = {"enum": ["off", False, 1, None]}
    check = compile_validity(schema_, pointer_lookup())
    assert check is not None
    full = jsonschema.Draft202012Validator(schema_)
    candidates = [False, True, 0, 1, 1.0, 2, "off", "1", "False", None, [], {}]
    assert [check(v) for v in candidates] == [full.is_valid(v) for v in candidates]


values = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                                st.text(max_size=8), st.sampled_from(["Exists", "TCP", "Always", "IfNotPresent",
                                                                      "Recreate", "ClusterIP", "v1"])),
                      lambda inner: st.one_of(st.lists(inner, max_size=3),
                                              st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                      max_leaves=6)


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(data, dict):
        for key, value in data.items():
            found += _paths(value, prefix + (key,))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            found += _paths(value, prefix + (i,))
    return found


def _mutated(data: st.DataObject, documents: list[dict[str, Any]], values_: st.SearchStrategy[Any],
             added: list[str]) -> dict[str, Any]:
    """A copy of one of `documents` with one change anywhere: a value replaced, a key removed, or a key of
    `added` set in a map."""
    document = copy.deepcopy(data.draw(st.sampled_from(documents)))
    path = data.draw(st.sampled_from(_paths(document)[1:]))
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    action = data.draw(st.sampled_from(["replace", "remove", "add"]))
    if action == "replace":
        parent[path[-1]] = data.draw(values_)
    elif action == "remove":
        del parent[path[-1]]
    elif isinstance(parent[path[-1]], dict):
        parent[path[-1]][data.draw(st.sampled_from(added))] = data.draw(values_)
    return document


@SETTINGS
@given(st.data())
def test_both_agree_on_mutated_objects(data: st.DataObject):
    """One change anywhere in a real object: a value replaced, a key removed, or a key added (often unknown)."""
    known = ["name", "labels", "spec", "ports", "replicas", "selector", "port", "protocol", "kind", "x"]
    document = _mutated(data, OBJECTS, values, known)
    if "apiVersion" in document and "kind" in document and kubernetes_schemas.knows(VERSION, document):
        assert _quick(document) == _full_says_valid(document)


def _environment_layers() -> list[dict[str, Any]]:
    """The environment files of the fixture project and of the repository (thin layers and full ones)."""
    files = sorted((FIXTURE_PROJECT / "environments").glob("*.yaml")) + sorted((REPO_ROOT / "environments")
                                                                                .glob("*.yaml"))
    return [layering.without_nulls(yaml.safe_load(path.read_text(encoding="utf-8"))) for path in files]


LAYERS = _environment_layers()
layer_values = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-3, 70_000), st.floats(-1, 4),
                                      st.sampled_from(["", "a", "ray-a", "2Gi", "500m", "x" * 70, "Bad_Name", "off",
                                                       "error", "1.6.2", "v2", "-1"])),
                            lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                    st.dictionaries(st.sampled_from(["name", "cpu", "x", "server"]),
                                                                    inner, max_size=3)),
                            max_leaves=5)


def _layer_reports_nothing(data: dict[str, Any]) -> bool:
    return not [e for e in schema_report._validator().iter_errors(data) if not schema_report._layer_may_omit(e)]


def _merged_is_valid(data: dict[str, Any]) -> bool:
    return not any(True for _ in schema_report._validator().iter_errors(data))


def test_the_environment_schema_compiles_for_layers_and_merged_environments():
    assert schema._quick_check(layer=True) is not None and schema._quick_check(layer=False) is not None
    for data in LAYERS:
        assert schema._quick_check(layer=True)(data) == _layer_reports_nothing(data) is True
        assert schema._quick_check(layer=False)(data) == _merged_is_valid(data)


@SETTINGS
@given(st.data())
def test_both_agree_on_mutated_environment_files(data: st.DataObject):
    """A layer's check ignores missing fields other layers may set (not an item's name); the merged check does
    not; both as the full validator with validate_layer's and check_merged's filters."""
    document = _mutated(data, LAYERS, layer_values, ["name", "server", "schedule", "cpu", "x"])
    assert schema._quick_check(layer=True)(document) == _layer_reports_nothing(document)
    assert schema._quick_check(layer=False)(document) == _merged_is_valid(document)


def test_a_schema_of_another_draft_is_left_to_the_full_validator():
    registry = pointer_lookup()
    assert compile_validity({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}, registry) is None
    assert compile_validity({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"},
                            registry) is not None


def test_a_reference_to_what_it_does_not_compile_is_found_when_reached():
    """References compile when a document first reaches them; one that cannot be compiled makes the answer "not
    known" (False) from then on, so the full validator decides."""
    schema_ = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://example.com/s",
               "$defs": {"odd": {"pattern": "^a"}},  # pattern: only with the caller's regex dialect
               "properties": {"a": {"$ref": "#/$defs/odd"}, "b": {"type": "string"}}}
    check = compile_validity(schema_, pointer_lookup(schema_))
    assert check is not None
    assert check({"b": "x"}) is True  # the reference is not reached
    assert check({"a": "abc"}) is False and check({"b": "x"}) is False  # reached: not known, then never again


def test_an_instance_too_deep_for_the_check_is_left_to_the_full_validator_alone():
    """Nesting deeper than the closures can follow says "not known" for that instance only."""
    schema_ = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://example.com/tree",
               "type": "object", "properties": {"child": {"$ref": "#"}}}
    check = compile_validity(schema_, pointer_lookup(schema_))
    assert check is not None
    deep: dict[str, Any] = {}
    for _ in range(5000):
        deep = {"child": deep}
    assert check(deep) is False
    assert check({"child": {"child": {}}}) is True


def test_references_are_json_pointers_into_the_documents_given():
    """pointer_lookup finds what jsonschema's registry finds for the references krc's schemas use (a pointer into
    a document named by its $id, escapes included); anything else is not found, and the full validator decides."""
    shared = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://example.com/defs.json",
              "$defs": {"a/b": {"type": "string"}, "m~n": {"type": "integer"},
                        "list": {"allOf": [{"type": "boolean"}]}}}
    root = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://example.com/api/root",
            "properties": {"s": {"$ref": "/defs.json#/$defs/a~1b"}, "i": {"$ref": "../defs.json#/$defs/m~0n"},
                           "b": {"$ref": "https://example.com/defs.json#/$defs/list/allOf/0"},
                           "p": {"$ref": "/defs.json#/%24defs/a~1b"}}}
    check = compile_validity(root, pointer_lookup(root, shared))
    assert check is not None
    full = jsonschema.Draft202012Validator(root, registry=referencing.Resource.from_contents(shared)
                                           @ referencing.Registry())
    for instance in ({"s": "x", "i": 1, "b": True, "p": "y"}, {"s": 1}, {"i": "1"}, {"b": 0}, {"p": 2}):
        assert check(instance) == full.is_valid(instance), instance
    lookup = pointer_lookup(shared)
    for missing in ("https://example.com/other.json#/$defs/a~1b", "https://example.com/defs.json#anchor",
                    "https://example.com/defs.json#/$defs/absent", "https://example.com/defs.json#/$defs/list/allOf/x"):
        with pytest.raises(KeyError):
            lookup(missing)
    unknown = {"$schema": "https://json-schema.org/draft/2020-12/schema", "properties": {"a": {"$ref": "#nowhere"}}}
    compiled = compile_validity(unknown, pointer_lookup(unknown))
    assert compiled is not None and compiled({}) is True and compiled({"a": 1}) is False  # not known: full decides
