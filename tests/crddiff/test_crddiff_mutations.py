"""Synthetic CRD mutations: each check must fire with its severity, and nothing more severe must fire with it."""
from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from compiler.crddiff import CrdChange, compare_crds, has_breaking
from compiler.crddiff.changes import CHECKS, SEVERITY_ORDER

NAME = "widgets.example.com"


def _schema() -> dict:
    container = {"type": "object", "properties": {"image": {"type": "string"}}}
    group = {"type": "object", "required": ["groupName"],
             "properties": {"groupName": {"type": "string"},
                            "containers": {"type": "array", "items": container}}}
    spec = {
        "type": "object",
        "required": ["image"],
        "properties": {
            "image": {"type": "string", "pattern": "^[a-z]", "minLength": 1, "maxLength": 100},
            "replicas": {"type": "integer", "format": "int32", "minimum": 0, "maximum": 10, "default": 1},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "name": {"type": "string", "description": "The name."},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 5},
            "workerGroupSpecs": {"type": "array", "maxItems": 4, "items": group,
                                 "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["groupName"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "note": {"type": "string", "nullable": True},
            "managedBy": {"type": "string", "x-kubernetes-validations": [
                {"rule": "self == oldSelf", "message": "managedBy is immutable"}]},
            "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
        },
    }
    return {"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
        "spec": spec, "status": {"type": "object", "properties": {"state": {"type": "string"}}}}}


def base_crd() -> dict:
    def version(name: str, storage: bool) -> dict:
        return {"name": name, "served": True, "storage": storage, "schema": {"openAPIV3Schema": _schema()},
                "subresources": {"status": {}},
                "additionalPrinterColumns": [{"name": "state", "type": "string", "jsonPath": ".status.state"}]}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": NAME},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"kind": "Widget", "listKind": "WidgetList", "plural": "widgets",
                               "singular": "widget", "shortNames": ["wd"], "categories": ["all"]},
                     "versions": [version("v1", True), version("v1alpha1", False)]}}


def _version(crd: dict, name: str = "v1") -> dict:
    return next(v for v in crd["spec"]["versions"] if v["name"] == name)


def _spec(crd: dict, version: str = "v1") -> dict:
    """The `spec` node of the custom resource's schema."""
    return _version(crd, version)["schema"]["openAPIV3Schema"]["properties"]["spec"]


def _field(crd: dict, name: str) -> dict:
    return _spec(crd)["properties"][name]


def _new(edit: Callable[[dict], object]) -> Callable[[list, list], None]:
    """A mutation of the new CRD only (most of them)."""
    return lambda old, new: edit(new[0])


def _set(name: str, key: str, value) -> Callable[[list, list], None]:
    return _new(lambda crd: _field(crd, name).__setitem__(key, value))


def _drop(name: str, key: str) -> Callable[[list, list], None]:
    return _new(lambda crd: _field(crd, name).pop(key))


def _swap_storage(crd: dict) -> None:
    _version(crd, "v1")["storage"], _version(crd, "v1alpha1")["storage"] = False, True


def _stored_then_removed(old: list, new: list) -> None:
    old[0]["status"] = {"storedVersions": ["v1alpha1", "v1"]}
    new[0]["spec"]["versions"] = [_version(new[0], "v1")]


def _unserved_then(edit: Callable[[dict], object]) -> Callable[[list, list], None]:
    def mutate(old: list, new: list) -> None:
        _version(old[0], "v1alpha1")["served"] = False
        _version(new[0], "v1alpha1")["served"] = False
        edit(new[0])
    return mutate


def _reworded_deprecation(old: list, new: list) -> None:
    for crds, text in ((old, "v1alpha1 goes away"), (new, "v1alpha1 is removed in 2.0; use v1")):
        _version(crds[0], "v1alpha1").update(deprecated=True, deprecationWarning=text)


def _add_version(crd: dict) -> None:
    crd["spec"]["versions"].append({**copy.deepcopy(_version(crd, "v1")), "name": "v2", "storage": False})


def _add_crd(old: list, new: list) -> None:
    other = copy.deepcopy(new[0])
    other["metadata"]["name"] = "gadgets.example.com"
    new.append(other)


def _new_required_field(crd: dict) -> None:
    _spec(crd)["properties"]["owner"] = {"type": "string"}
    _spec(crd)["required"].append("owner")


def _container_items(crd: dict) -> dict:
    return _field(crd, "workerGroupSpecs")["items"]["properties"]["containers"]["items"]


M = [  # (id, mutation, expected check, expected severity, expected version, expected path)
    ("scope", _new(lambda c: c["spec"].__setitem__("scope", "Cluster")), "scope-changed", "breaking", "", ""),
    ("crd-removed", lambda old, new: new.clear(), "crd-removed", "breaking", "", ""),
    ("crd-added", _add_crd, "crd-added", "info", "", ""),
    ("kind", _new(lambda c: c["spec"]["names"].__setitem__("kind", "Gizmo")), "kind-changed", "breaking", "", ""),
    ("short-names", _new(lambda c: c["spec"]["names"].__setitem__("shortNames", [])), "names-changed", "warning",
     "", ""),
    ("conversion", _new(lambda c: c["spec"].__setitem__("conversion", {"strategy": "Webhook"})),
     "conversion-changed", "warning", "", ""),
    ("served-version-removed", _new(lambda c: c["spec"]["versions"].pop()), "served-version-removed", "breaking",
     "v1alpha1", ""),
    ("version-unserved", _new(lambda c: _version(c, "v1alpha1").__setitem__("served", False)),
     "served-version-removed", "breaking", "v1alpha1", ""),
    ("stored-version-removed", _stored_then_removed, "stored-version-removed", "breaking", "v1alpha1", ""),
    ("unserved-version-removed", _unserved_then(lambda c: c["spec"]["versions"].pop()), "version-removed", "info",
     "v1alpha1", ""),
    ("version-served", lambda old, new: _version(old[0], "v1alpha1").__setitem__("served", False),
     "version-served", "info", "v1alpha1", ""),
    ("storage-version", _new(_swap_storage), "storage-version-changed", "breaking", "v1alpha1", ""),
    ("version-added", _new(_add_version), "version-added", "info", "v2", ""),
    ("deprecated", _new(lambda c: _version(c, "v1alpha1").__setitem__("deprecated", True)), "version-deprecated",
     "warning", "v1alpha1", ""),
    ("status-subresource-removed", _new(lambda c: _version(c).pop("subresources")), "subresource-removed",
     "breaking", "v1", ""),
    ("scale-subresource-added", _new(lambda c: _version(c)["subresources"].__setitem__("scale", {})),
     "subresource-added", "warning", "v1", ""),
    ("printer-columns", _new(lambda c: _version(c).__setitem__("additionalPrinterColumns", [])),
     "printer-columns-changed", "info", "v1", ""),
    ("field-removed", _new(lambda c: _spec(c)["properties"].pop("name")), "field-removed", "breaking", "v1",
     "spec.name"),
    ("nested-field-removed", _new(lambda c: _container_items(c)["properties"].pop("image")), "field-removed",
     "breaking", "v1", "spec.workerGroupSpecs[*].containers[*].image"),
    ("old-version-field-removed", _new(lambda c: _spec(c, "v1alpha1")["properties"].pop("note")), "field-removed",
     "breaking", "v1alpha1", "spec.note"),
    ("map-values-removed", _drop("labels", "additionalProperties"), "field-removed", "breaking", "v1",
     "spec.labels.*"),
    ("type", _set("replicas", "type", "string"), "type-changed", "breaking", "v1", "spec.replicas"),
    ("map-value-type", _new(lambda c: _field(c, "labels")["additionalProperties"].__setitem__("type", "integer")),
     "type-changed", "breaking", "v1", "spec.labels.*"),
    ("int-or-string", _drop("port", "x-kubernetes-int-or-string"), "type-changed", "breaking", "v1", "spec.port"),
    ("integer-to-int-or-string", _new(lambda c: _spec(c)["properties"].__setitem__("replicas", {
        "x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]})),
     "type-changed", "breaking", "v1", "spec.replicas"),
    ("map-values-restricted", _new(lambda c: _field(c, "config").__setitem__("additionalProperties",
                                                                             {"type": "string"})),
     "values-restricted", "breaking", "v1", "spec.config.*"),
    ("field-under-preserved-object", _new(lambda c: _field(c, "config").__setitem__("properties", {
        "size": {"type": "integer"}})), "values-restricted", "breaking", "v1", "spec.config.size"),
    ("list-items-restricted", lambda old, new: [_field(crd, "config").update(
        type="array", **({"items": {"type": "integer"}} if crd is new[0] else {})) for crd in (old[0], new[0])],
     "values-restricted", "breaking", "v1", "spec.config[*]"),
    ("enum-value-removed", _set("mode", "enum", ["a"]), "enum-value-removed", "breaking", "v1", "spec.mode"),
    ("enum-added", _set("name", "enum", ["x"]), "enum-added", "breaking", "v1", "spec.name"),
    ("enum-value-added", _set("mode", "enum", ["a", "b", "c"]), "enum-value-added", "warning", "v1", "spec.mode"),
    ("enum-removed", _drop("mode", "enum"), "enum-removed", "info", "v1", "spec.mode"),
    ("required-field-added", _new(_new_required_field), "required-field-added", "breaking", "v1", "spec.owner"),
    ("field-now-required", _new(lambda c: _spec(c)["required"].append("name")), "field-now-required", "breaking",
     "v1", "spec.name"),
    ("field-now-optional", _new(lambda c: _spec(c).__setitem__("required", [])), "field-now-optional", "info",
     "v1", "spec.image"),
    ("default-added", _set("name", "default", "x"), "default-added", "breaking", "v1", "spec.name"),
    ("default-changed", _set("replicas", "default", 2), "default-changed", "breaking", "v1", "spec.replicas"),
    ("default-removed", _drop("replicas", "default"), "default-removed", "breaking", "v1", "spec.replicas"),
    ("minimum-raised", _set("replicas", "minimum", 1), "bound-tightened", "breaking", "v1", "spec.replicas"),
    ("maximum-lowered", _set("replicas", "maximum", 5), "bound-tightened", "breaking", "v1", "spec.replicas"),
    ("maximum-raised", _set("replicas", "maximum", 20), "bound-loosened", "info", "v1", "spec.replicas"),
    ("minimum-removed", _drop("replicas", "minimum"), "bound-loosened", "info", "v1", "spec.replicas"),
    ("min-length-added", _set("name", "minLength", 3), "bound-tightened", "breaking", "v1", "spec.name"),
    ("max-length-lowered", _set("image", "maxLength", 50), "bound-tightened", "breaking", "v1", "spec.image"),
    ("max-length-removed", _drop("image", "maxLength"), "bound-loosened", "info", "v1", "spec.image"),
    ("max-items-lowered", _set("workerGroupSpecs", "maxItems", 2), "bound-tightened", "breaking", "v1",
     "spec.workerGroupSpecs"),
    ("min-items-added", _set("tags", "minItems", 1), "bound-tightened", "breaking", "v1", "spec.tags"),
    ("max-properties-lowered", _set("labels", "maxProperties", 3), "bound-tightened", "breaking", "v1",
     "spec.labels"),
    ("min-properties-added", _set("labels", "minProperties", 1), "bound-tightened", "breaking", "v1", "spec.labels"),
    ("exclusive-minimum", _set("replicas", "exclusiveMinimum", True), "bound-tightened", "breaking", "v1",
     "spec.replicas"),
    ("multiple-of", _set("replicas", "multipleOf", 2), "bound-tightened", "breaking", "v1", "spec.replicas"),
    ("unique-items", _set("tags", "uniqueItems", True), "bound-tightened", "breaking", "v1", "spec.tags"),
    ("pattern-added", _set("name", "pattern", "^x"), "pattern-added", "breaking", "v1", "spec.name"),
    ("pattern-changed", _set("image", "pattern", "^[a-z0-9]"), "pattern-changed", "breaking", "v1", "spec.image"),
    ("pattern-removed", _drop("image", "pattern"), "pattern-removed", "info", "v1", "spec.image"),
    ("format-changed", _set("replicas", "format", "int64"), "format-changed", "warning", "v1", "spec.replicas"),
    ("nullable-removed", _drop("note", "nullable"), "nullable-removed", "breaking", "v1", "spec.note"),
    ("nullable-added", _set("name", "nullable", True), "nullable-added", "info", "v1", "spec.name"),
    ("cel-added", _set("name", "x-kubernetes-validations", [{"rule": "size(self) < 10"}]), "validation-rule-added",
     "warning", "v1", "spec.name"),
    ("cel-changed", _set("managedBy", "x-kubernetes-validations", [{"rule": "self == 'x'", "message": "m"}]),
     "validation-rule-changed", "warning", "v1", "spec.managedBy"),
    ("cel-removed", _drop("managedBy", "x-kubernetes-validations"), "validation-rule-removed", "info", "v1",
     "spec.managedBy"),
    ("cel-message", _set("managedBy", "x-kubernetes-validations", [{"rule": "self == oldSelf", "message": "no"}]),
     "validation-message-changed", "info", "v1", "spec.managedBy"),
    ("preserve-unknown-removed", _drop("config", "x-kubernetes-preserve-unknown-fields"),
     "preserve-unknown-fields-removed", "breaking", "v1", "spec.config"),
    ("preserve-unknown-added", _set("name", "x-kubernetes-preserve-unknown-fields", True),
     "preserve-unknown-fields-added", "info", "v1", "spec.name"),
    ("list-type-set", _set("tags", "x-kubernetes-list-type", "set"), "list-type-changed", "breaking", "v1",
     "spec.tags"),
    ("list-type-atomic", _new(lambda c: [_field(c, "workerGroupSpecs").pop(k) for k in
                                         ("x-kubernetes-list-type", "x-kubernetes-list-map-keys")]),
     "list-type-changed", "warning", "v1", "spec.workerGroupSpecs"),
    ("list-map-keys", _set("workerGroupSpecs", "x-kubernetes-list-map-keys", ["groupName", "name"]),
     "list-map-keys-changed", "breaking", "v1", "spec.workerGroupSpecs"),
    ("map-type", _set("labels", "x-kubernetes-map-type", "atomic"), "map-type-changed", "warning", "v1",
     "spec.labels"),
    ("embedded-resource", _set("config", "x-kubernetes-embedded-resource", True), "embedded-resource-changed",
     "warning", "v1", "spec.config"),
    ("any-of", _set("port", "anyOf", [{"type": "integer"}]), "unhandled-change", "warning", "v1", "spec.port"),
    ("description", _set("name", "description", "Another name."), "description-changed", "info", "v1", "spec.name"),
    ("title", _set("name", "title", "Name"), "documentation-changed", "info", "v1", "spec.name"),
    ("scale-paths", lambda old, new: [_version(crd)["subresources"].__setitem__("scale", {
        "specReplicasPath": path, "statusReplicasPath": ".status.replicas"}) for crd, path in
        ((old[0], ".spec.replicas"), (new[0], ".spec.size"))], "subresource-changed", "warning", "v1", ""),
    ("selectable-fields", _new(lambda c: _version(c).__setitem__("selectableFields", [{"jsonPath": ".spec.mode"}])),
     "selectable-fields-changed", "info", "v1", ""),
    ("deprecation-warning", _reworded_deprecation, "deprecation-warning-changed", "info", "v1alpha1", ""),
    ("undeprecated", lambda old, new: _version(old[0], "v1alpha1").__setitem__("deprecated", True),
     "version-undeprecated", "info", "v1alpha1", ""),
    ("field-added", _new(lambda c: _spec(c)["properties"].__setitem__("extra", {"type": "boolean"})), "field-added",
     "info", "v1", "spec.extra"),
    ("nested-field-added", _new(lambda c: _container_items(c)["properties"].__setitem__("tag", {"type": "string"})),
     "field-added", "info", "v1", "spec.workerGroupSpecs[*].containers[*].tag"),
]


@pytest.mark.parametrize("mutation, check, severity, version, path", [m[1:] for m in M], ids=[m[0] for m in M])
def test_each_mutation_is_caught_with_its_severity(mutation, check, severity, version, path):
    old, new = [base_crd()], [base_crd()]
    mutation(old, new)
    changes = compare_crds(old, new)
    assert (NAME if check != "crd-added" else "gadgets.example.com", version, path, check, severity) in {
        (c.crd, c.version, c.path, c.check, c.severity) for c in changes}, changes
    # nothing reported alongside is more severe than the change itself
    assert min(SEVERITY_ORDER[c.severity] for c in changes) == SEVERITY_ORDER[severity], changes
    assert has_breaking(changes) == (severity == "breaking")
    assert {c.check for c in changes} <= set(CHECKS)


def test_an_int_or_string_change_is_one_finding():
    # type, x-kubernetes-int-or-string and the anyOf that goes with it all change: still one type change
    new = base_crd()
    _spec(new)["properties"]["replicas"] = {"x-kubernetes-int-or-string": True,
                                            "anyOf": [{"type": "integer"}, {"type": "string"}]}
    _spec(new)["properties"]["port"] = {"type": "integer"}
    found = [(c.path, c.check, c.old, c.new) for c in compare_crds([base_crd()], [new])
             if c.check in ("type-changed", "unhandled-change")]
    assert sorted(found) == [("spec.port", "type-changed", "int-or-string", "integer"),
                             ("spec.replicas", "type-changed", "integer", "int-or-string")]


def test_a_map_value_schema_is_additive_only_where_values_were_pruned():
    old, new = base_crd(), base_crd()
    for crd in (old, new):  # an object with no properties and no preserve-unknown-fields: everything is pruned
        _spec(crd)["properties"]["pruned"] = {"type": "object"}
    _field(new, "pruned")["additionalProperties"] = {"type": "string"}
    _field(new, "config")["additionalProperties"] = {"type": "string"}
    assert sorted((c.path, c.check, c.severity) for c in compare_crds([old], [new])) == [
        ("spec.config.*", "values-restricted", "breaking"), ("spec.pruned.*", "field-added", "info")]


def test_table_covers_every_check_the_comparison_can_emit():
    assert {m[2] for m in M} == set(CHECKS)


def test_identical_crds_have_no_changes():
    assert compare_crds([base_crd()], [base_crd()]) == []


def test_purely_additive_upgrade_is_not_breaking():
    old, new = [base_crd()], [base_crd()]
    for mutation in (_add_crd, _new(_add_version), _drop("mode", "enum"), _set("replicas", "maximum", 20),
                     _drop("image", "pattern"), _set("name", "nullable", True),
                     _new(lambda c: _spec(c)["properties"].__setitem__("extra", {
                         "type": "object", "required": ["x"], "properties": {"x": {"type": "string"}}})),
                     _new(lambda c: _spec(c).__setitem__("required", []))):
        mutation(old, new)
    changes = compare_crds(old, new)
    assert len(changes) == 8
    assert {c.severity for c in changes} == {"info"}
    assert not has_breaking(changes)


def test_a_new_required_field_inside_a_new_optional_object_is_additive():
    new = base_crd()
    _spec(new)["properties"]["extra"] = {"type": "object", "required": ["x"], "properties": {"x": {"type": "string"}}}
    assert [(c.path, c.check, c.severity) for c in compare_crds([base_crd()], [new])] == [
        ("spec.extra", "field-added", "info")]


def test_changes_are_sorted_breaking_first_and_records_are_frozen():
    old, new = [base_crd()], [base_crd()]
    for mutation in (_set("replicas", "maximum", 20), _new(lambda c: _spec(c)["properties"].pop("name")),
                     _set("mode", "enum", ["a", "b", "c"])):
        mutation(old, new)
    changes = compare_crds(old, new)
    assert [c.severity for c in changes] == ["breaking", "warning", "info"]
    with pytest.raises(AttributeError):
        changes[0].severity = "info"  # type: ignore[misc]
    assert isinstance(changes[0], CrdChange)


@pytest.mark.parametrize("crds, message", [
    ([{"kind": "CustomResourceDefinition", "metadata": {}}], "has no metadata.name"),
    ([{"metadata": {"name": "a.b"}, "spec": {"version": "v1"}}], "only apiextensions.k8s.io/v1 CRDs"),
    ([base_crd(), base_crd()], "defined twice"),
])
def test_malformed_crds_are_input_errors(crds, message):
    from compiler.diagnostics.problems import KrcError
    with pytest.raises(KrcError, match=message):
        compare_crds(crds, [base_crd()])
