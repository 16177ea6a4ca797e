"""Property-based tests (hypothesis) of the round trips and identities the code claims."""
from __future__ import annotations

from typing import Any

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler.diagnostics import fieldpath
from compiler.diagnostics.problems import Location
from compiler.documents import yaml_emit, yaml_events, yamlio
from compiler.environment.layering import merge_values
from compiler.review.fielddiff import diff_documents

SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow])  # examples: the profile's (tests/conftest.py)

keys = st.text(min_size=0, max_size=12)
segments = st.lists(st.one_of(keys, st.integers(min_value=0, max_value=10_000)), max_size=8).map(tuple)
scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**53), max_value=2**53),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=40))
documents = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(keys, inner, max_size=4)), max_leaves=25)


@SETTINGS
@given(segments)
@example(("A\n",))  # a key ending in a newline once rendered unquoted, and did not parse back
def test_field_path_parse_inverts_render(path: tuple[Any, ...]) -> None:
    assert fieldpath.parse(fieldpath.render(path)) == path


@SETTINGS
@given(st.lists(documents, min_size=1, max_size=3))
@example([{"<<": None}])  # written quoted, a key like any other: once declined by the event path as a merge key
def test_the_two_yaml_loaders_agree_on_what_the_dumper_writes(stream: list[Any]) -> None:
    """The event path (yaml_events, what load_all answers plain data with) and PyYAML's safe loader."""
    text = yamlio.dump_all(stream)
    safe = [d for d in yaml.load_all(text, Loader=yamlio.SafeLoader) if d is not None]
    assert yaml_events.plain_documents(text) == safe
    assert yamlio.load_all(text, "<stream>") == safe


def _composed_with_positions(text: str) -> list[tuple[Any, dict[Any, Location]]]:
    """PyYAML's node graph turned into data and places: the path load_all_with_positions takes for what is not
    plain data."""
    out = []
    for node in yamlio._composed(text, "f.yaml"):
        builder = yamlio._Builder("f.yaml")
        out.append((builder.build(node, ()), builder.positions))
    return out


@SETTINGS
@given(st.lists(documents, min_size=1, max_size=3), st.booleans())
@example([{"a": [1, {"b": None}], "c": "x\ny"}], True)
def test_the_positioned_loaders_agree(stream: list[Any], flow: bool) -> None:
    """The event path (yaml_events.positioned_documents) and the composed one give the same data and places, in
    block style and in flow style."""
    text = "".join("---\n" + yaml.dump(doc, default_flow_style=flow, Dumper=yamlio.SafeDumper) for doc in stream)
    fast = yaml_events.positioned_documents(text, "f.yaml")
    assert fast is not None
    assert fast == _composed_with_positions(text)


@SETTINGS
@given(documents)
def test_dump_then_load_gives_the_data_back(document: Any) -> None:
    assert yamlio.load(yamlio.dump(document)) == document


# text that reads back as something else when plain, or that the emitter must quote or write as a block
tricky_text = st.sampled_from(["true", "No", "~", "null", "1", "0x1F", "1_000", "1.5e3", ".inf", "2024-01-01", "<<",
                               "=", "- x", "a: b", "#c", " lead", "trail ", "x\n", "x\ny", "x\n\n", "\ttab",
                               "\x85", "\u2028", "\ufeff", "a\u00a0b", "'q'", '"dq"', ""])
emitted = st.recursive(st.one_of(scalars, tricky_text, st.floats(), st.integers()),
                       lambda inner: st.one_of(st.lists(inner, max_size=4),
                                               st.dictionaries(st.one_of(keys, tricky_text), inner, max_size=4),
                                               st.dictionaries(st.integers(), inner, max_size=3)),
                       max_leaves=25)


@SETTINGS
@given(emitted)
@example({"pip": "pip:\n- torch\n"})  # a literal block (the style once went where the start mark belongs)
def test_the_event_emitter_writes_what_pyyaml_writes(document: Any) -> None:
    """yaml_emit (the event path: what yamlio.dump writes plain data with when yaml_text does not) and PyYAML's
    dumper give the same bytes."""
    pyyaml = yaml.dump(document, Dumper=yamlio._CanonicalDumper, sort_keys=True, default_flow_style=False,
                       allow_unicode=True, width=yamlio.DUMP_WIDTH, explicit_start=False)
    assert yaml_emit.plain_text(document, yamlio.DUMP_WIDTH) == pyyaml


def test_what_the_emitter_does_not_write_goes_through_pyyaml() -> None:
    shared = {"a": 1}
    assert yaml_emit.plain_text({"x": shared, "y": shared}, yamlio.DUMP_WIDTH) is None  # PyYAML: an anchor
    assert "&id001" in yamlio.dump({"x": shared, "y": shared})
    assert yaml_emit.plain_text({"when": (1, 2)}, yamlio.DUMP_WIDTH) is None
    assert yaml_emit.plain_text({1: "a", "b": 2}, yamlio.DUMP_WIDTH) is None  # keys that do not sort
    assert yamlio.dump({1: "a", "b": 2}) == "1: a\nb: 2\n"


maps = st.dictionaries(keys, documents, max_size=5)


@SETTINGS
@given(maps)
def test_comparing_a_document_with_itself_finds_nothing(document: dict[str, Any]) -> None:
    assert diff_documents(document, document) == ()


# Layers as environment files write them: every key has one kind of value in all layers (as the schema makes
# it), named lists (so they merge item by item), other lists and scalars (replaced), and nulls that remove keys.
names = st.sampled_from(["a", "b", "c"])
named_items = st.builds(lambda name, extra: {"name": name, **extra}, names,
                        st.dictionaries(st.sampled_from(["x", "y", "z"]), st.integers(0, 3) | st.none(), max_size=2))
named_lists = st.lists(named_items, min_size=1, max_size=3, unique_by=lambda item: item["name"])
layers = st.deferred(lambda: st.fixed_dictionaries({}, optional={
    "map": layers | st.none(),
    "groups": named_lists | st.none(),
    "ports": st.lists(st.integers(0, 3), max_size=3) | st.none(),
    "replicas": st.integers(0, 3) | st.none(),
}))


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


@SETTINGS
@given(layers, layers, layers)
def test_merging_layers_is_associative(a: dict[str, Any], b: dict[str, Any], c: dict[str, Any]) -> None:
    """(a + b) + c == a + (b + c) for layers of maps, named lists, other lists and scalars.

    A null is a deletion applied to what the layers before it built, so layers with nulls are folded in order
    (base first) by design; there the identity cannot hold ({p: {}} + {} + {p: null}), and the layering tests
    pin that order down."""
    a, b, c = _without_nulls(a), _without_nulls(b), _without_nulls(c)
    assert merge_values(merge_values(a, b), c) == merge_values(a, merge_values(b, c))


@SETTINGS
@given(layers, layers)
def test_a_null_removes_what_the_layers_before_it_set(a: dict[str, Any], b: dict[str, Any]) -> None:
    merged = merge_values(_without_nulls(a), b)
    for key, value in b.items():
        if value is None:
            assert key not in merged
