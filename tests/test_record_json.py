"""record_json: records to JSON data and back, strict about every declared type (a cache entry that does not fit
is refused, never half-read)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import pytest

from compiler.documents.record_json import from_json, to_json


@dataclass(frozen=True)
class Inner:
    kind: Literal["added", "removed"]
    count: int
    ratio: float = 0.0


@dataclass(frozen=True)
class Outer:
    name: str
    inners: tuple[Inner, ...]
    pair: tuple[str, int]
    maybe: Inner | None
    by_name: dict[str, int]
    data: Any
    flags: tuple[bool, ...] = field(default=())


SAMPLE = Outer("dev", (Inner("added", 2, 0.5), Inner("removed", 0)), ("a", 1), None, {"x": 1},
               {"nested": [1, "two", None]}, (True, False))


def test_a_record_comes_back_equal():
    assert from_json(Outer, to_json(SAMPLE)) == SAMPLE


@pytest.mark.parametrize("change", [
    {"name": 3},  # a number for a string
    {"inners": [{"kind": "changed", "count": 1, "ratio": 0.0}]},  # not one of the literal's values
    {"inners": [{"kind": "added", "count": True, "ratio": 0.0}]},  # a boolean is not an int
    {"pair": ["a"]},  # a fixed tuple of the wrong length
    {"maybe": {"kind": "added"}},  # a record with fields missing
    {"flags": [1]},  # an int is not a boolean
    {"by_name": {"x": "1"}},
])
def test_anything_that_does_not_fit_is_refused(change: dict[str, Any]):
    with pytest.raises(ValueError):
        from_json(Outer, to_json(SAMPLE) | change)


def test_unknown_fields_are_refused():
    with pytest.raises(ValueError):
        from_json(Outer, to_json(SAMPLE) | {"extra": 1})


def test_values_json_cannot_hold_are_not_written():
    with pytest.raises(TypeError):
        to_json(Outer("x", (), ("a", 1), None, {}, {1.5: "float key"}))
    with pytest.raises(TypeError):
        to_json(Outer("x", (), ("a", 1), None, {}, object()))


@dataclass(frozen=True)
class Tree:
    name: str
    children: tuple[Tree, ...] = ()


def test_a_record_may_hold_records_of_its_own_type():
    tree = Tree("root", (Tree("a"), Tree("b", (Tree("c"),))))
    assert from_json(Tree, to_json(tree)) == tree
    with pytest.raises(ValueError):
        from_json(Tree, {"name": "root", "children": [{"name": 1, "children": []}]})
