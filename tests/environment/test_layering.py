"""Merge rules and provenance of environment layers."""
from __future__ import annotations

from compiler.diagnostics.problems import Location
from compiler.documents import yamlio
from compiler.environment.layering import merge_layers, merge_values, named_path, named_positions


def layer(text: str, name: str):
    data, positions = yamlio.load_with_positions(text, name)
    return data, named_positions(data, positions), Location(name, 1, 1)


BASE = """\
ray: {version: '2.57.0', image: old}
labels: {team: a, tier: gold}
clusters:
  - name: one
    workerGroups:
      - name: cpu
        maxReplicas: 2
      - name: gpu
        maxReplicas: 1
tolerations: [x, y]
"""
OVER = """\
ray: {version: '2.58.0'}
labels: {tier: null}
clusters:
  - name: one
    workerGroups:
      - name: gpu
        maxReplicas: 4
      - name: tpu
        maxReplicas: 1
  - name: two
tolerations: [z]
"""


def merged():
    return merge_layers([layer(BASE, "base.yaml"), layer(OVER, "dev.yaml")])


def test_maps_merge_deeply_and_scalars_are_replaced():
    data, _ = merged()
    assert data["ray"] == {"version": "2.58.0", "image": "old"}


def test_null_removes_a_key():
    data, origins = merged()
    assert data["labels"] == {"team": "a"}
    assert ("labels", "tier") not in origins


def test_named_lists_merge_by_name_keeping_order_and_appending_new_names():
    data, _ = merged()
    cluster = data["clusters"][0]
    assert [g["name"] for g in cluster["workerGroups"]] == ["cpu", "gpu", "tpu"]
    assert cluster["workerGroups"][1] == {"name": "gpu", "maxReplicas": 4}
    assert cluster["workerGroups"][0] == {"name": "cpu", "maxReplicas": 2}
    assert [c["name"] for c in data["clusters"]] == ["one", "two"]


def test_other_lists_are_replaced():
    data, _ = merged()
    assert data["tolerations"] == ["z"]


def test_every_value_remembers_the_chain_of_files_that_set_it():
    _, origins = merged()
    assert [str(loc) for loc in origins[("clusters", "one", "workerGroups", "gpu", "maxReplicas")]] == [
        "base.yaml:9:9", "dev.yaml:7:9"]
    assert [str(loc) for loc in origins[("clusters", "one", "workerGroups", "cpu", "maxReplicas")]] == ["base.yaml:7:9"]
    assert [str(loc) for loc in origins[("ray", "image")]] == ["base.yaml:1:26"]
    assert [str(loc) for loc in origins[("clusters", "one", "workerGroups", "tpu")]] == ["dev.yaml:8:9"]


def test_replaced_list_forgets_the_items_of_the_old_list():
    _, origins = merged()
    assert ("tolerations", 1) not in origins
    assert [str(loc) for loc in origins[("tolerations",)]] == ["base.yaml:10:1", "dev.yaml:11:1"]


def test_named_path_translates_indexes_to_names():
    data, _ = merged()
    assert named_path(data, ("clusters", 0, "workerGroups", 2, "maxReplicas")) == (
        "clusters", "one", "workerGroups", "tpu", "maxReplicas")
    assert named_path(data, ("tolerations", 0)) == ("tolerations", 0)


def test_merge_values_follows_the_same_rules():
    base = {"featureGates": [{"name": "A", "enabled": False}], "keep": 1, "drop": 2}
    over = {"featureGates": [{"name": "A", "enabled": True}, {"name": "B", "enabled": True}], "drop": None}
    assert merge_values(base, over) == {
        "featureGates": [{"name": "A", "enabled": True}, {"name": "B", "enabled": True}], "keep": 1}
