"""The event path of yamlio.load_all (yaml_events): plain data only, everything else left to the composed path,
which keeps its errors and bounds."""
from __future__ import annotations

import pytest
import yaml

from compiler.diagnostics.problems import KrcError, Location
from compiler.documents import yaml_events, yamlio
from compiler.settings import limits


@pytest.mark.parametrize("text", [
    "a: &x {n: 1}\nb: *x\n",            # anchors and aliases
    "a: !!binary aGk=\n",               # explicit tags
    "base: {n: 1}\nc:\n  <<: {m: 2}\n",  # merge keys
    "~: null key\n",                    # keys that are not str, int, float or bool
    "[1, 2]: list key\n",
    "a: 1\n b: [\n",                    # not YAML at all
])
def test_what_is_not_plain_data_is_left_to_the_composed_path(text: str):
    assert yaml_events.plain_documents(text) is None


@pytest.mark.parametrize("text", ["'<<': null\n", "a:\n  \"<<\": [1]\n"])
def test_a_quoted_merge_key_is_a_key_like_any_other(text: str):
    """Only a plain `<<` is a merge key; quoted (as krc's dumper writes a key of that text) it is plain data."""
    expected = list(yaml.safe_load_all(text))
    assert yaml_events.plain_documents(text) == expected == yamlio.load_all(text)


def test_plain_data_resolves_scalars_like_the_safe_loader():
    text = ("yes: on\nnum: 0x1F\nf: 1.5e3\nnull_: ~\nempty:\nq: 'on'\nts: 2024-01-02\nbang: ! 12\n"
            "lit: |\n  two\n  lines\n---\n---\n- [1, {a: b}]\n")
    expected = [d for d in yaml.safe_load_all(text) if d is not None]
    assert yaml_events.plain_documents(text) == expected == yamlio.load_all(text)


def test_scalars_remembered_across_files_stay_bounded_and_read_the_same(monkeypatch: pytest.MonkeyPatch):
    """One resolver per thread remembers every plain scalar it resolved, for every file after; past its bound it
    starts afresh, and what it gives never differs from the safe loader's."""
    monkeypatch.setattr(yaml_events, "_SCALARS_KEPT", 5)
    resolver = yaml_events._resolver()
    assert resolver is yaml_events._resolver()  # the same one for the next file of this thread
    texts = [f"a{i}: {i}\nflag: yes\nwhen: 2024-01-0{i % 9 + 1}\nf: 1.{i}e3\nname: n-{i}\n" for i in range(20)]
    for text in texts * 2:
        assert yaml_events.plain_documents(text) == [yaml.safe_load(text)]
        assert len(resolver.cache) <= 5


@pytest.mark.parametrize("depth", [limits.YAML_DEPTH.value - 2, limits.YAML_DEPTH.value - 1,
                                   limits.YAML_DEPTH.value, limits.YAML_DEPTH.value + 1])
def test_the_depth_bound_holds_on_either_path(depth: int):
    """`depth` levels of lists around a scalar: the scalar sits one level deeper, and the bound counts it."""
    text = "[" * depth + "1" + "]" * depth + "\n"
    if depth + 1 > limits.YAML_DEPTH.value:
        with pytest.raises(KrcError, match="nesting"):
            yamlio.load_all(text, "deep.yaml")
    else:
        assert yamlio.load_all(text, "deep.yaml") == [yaml.safe_load(text)]


@pytest.mark.parametrize("text", [
    "a: " + "{k: [" * 60 + "1" + "]}" * 60 + "\n",  # maps and lists, in flow style
    "".join("  " * i + f"k{i}:\n" for i in range(120)) + "  " * 120 + "v\n",  # block style, the value too deep
    "ok: [1]\n---\n" + "[" * 150 + "]" * 150 + "\n",  # in the second document
])
def test_too_deep_is_found_before_composing_where_the_composed_check_finds_it(text: str):
    """first_too_deep reads events only; the composed bounds check would compose the whole graph first."""
    found = yaml_events.first_too_deep(text, "deep.yaml")
    assert found is not None
    with pytest.raises(KrcError) as composed:
        for node in yaml.compose_all(text, Loader=yamlio.SafeLoader):
            if node is not None:
                yamlio._check_bounds(node, "deep.yaml")
    assert composed.value.problems[0].location == found
    with pytest.raises(KrcError, match="nesting") as loaded:
        yamlio.load_all(text, "deep.yaml")
    assert loaded.value.problems[0].location == found


def test_nothing_too_deep_or_not_yaml_is_left_to_the_composed_path():
    assert yaml_events.first_too_deep("a: [1, {b: 2}]\n", "ok.yaml") is None
    # an alias deep down names a node anchored near the top: the composed check judges that node where it stands
    aliased = "a: &x {n: 1}\nb: " + "[" * 120 + "*x" + "]" * 120 + "\n"
    assert yaml_events.first_too_deep(aliased, "alias.yaml") is not None  # the lists around the alias, not it
    shallow_alias = "a: &x {n: 1}\nb: " + "[" * 99 + "*x" + "]" * 99 + "\n"  # the alias one level past the bound
    assert yaml_events.first_too_deep(shallow_alias, "alias.yaml") is None
    assert yamlio.load_all(shallow_alias, "alias.yaml")[0]["b"] == yaml.safe_load(shallow_alias)["b"]
    assert yaml_events.first_too_deep("a: 1\n b: [\n" + "[" * 150, "broken.yaml") is None


def test_the_node_bound_holds_on_either_path(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(limits.YAML_NODES.variable, "10")
    assert yamlio.load_all("[1, 2, 3, 4, 5, 6, 7, 8]\n") == [[1, 2, 3, 4, 5, 6, 7, 8]]
    with pytest.raises(KrcError, match="node count"):
        yamlio.load_all("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]\n", "big.yaml")
    # a stream of small documents is judged document by document
    assert yamlio.load_all("[1, 2, 3]\n---\n[4, 5, 6]\n---\n[7, 8, 9]\n---\n[10, 11, 12]\n") == \
        [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]]


@pytest.mark.parametrize("text", ["", "---\n", "a: 1\n", "null\n", "a: 1\n---\nnull\n", "---\n---\n", "# only\n"])
def test_one_document_reads_as_the_composed_path_reads_it(text: str):
    """yamlio.load: several documents (a null one included) are an error, an empty stream is None."""
    nodes = list(yaml.compose_all(text, Loader=yamlio.SafeLoader))
    if len(nodes) > 1:
        with pytest.raises(KrcError, match="several"):
            yamlio.load(text, "one.yaml")
    else:
        assert yamlio.load(text, "one.yaml") == yaml.safe_load(text)


@pytest.mark.parametrize("text", ["a: 1\na: 2\n", "a: &x {n: 1}\nb: *x\n", "~: null key\n", "a: 1\n b: [\n"])
def test_the_positioned_event_path_leaves_duplicates_and_non_plain_data_to_the_composed_path(text: str):
    assert yaml_events.positioned_documents(text, "f.yaml") is None


def test_a_duplicate_key_is_still_an_error_with_its_place():
    with pytest.raises(KrcError, match="duplicate key 'a'") as caught:
        yamlio.load_with_positions("b: 0\na: 1\na: 2\n", "f.yaml")
    assert str(caught.value.problems[0].location) == "f.yaml:3:1"


def test_places_are_where_readers_look():
    """A map entry at its key, a list item at itself, an empty stream at the top of the file."""
    data, positions = yamlio.load_with_positions("a:\n  - x\n  - {b: 1}\nc: 2\n", "f.yaml")
    assert data == {"a": ["x", {"b": 1}], "c": 2}
    assert {path: (loc.line, loc.column) for path, loc in positions.items()} == {
        (): (1, 1), ("a",): (1, 1), ("a", 0): (2, 5), ("a", 1): (3, 5), ("a", 1, "b"): (3, 6), ("c",): (4, 1)}
    assert yamlio.load_with_positions("# nothing\n", "f.yaml") == (None, {(): Location("f.yaml", 1, 1)})


@pytest.mark.parametrize("text", [
    "keep: 1\nskip: {a: [1, {b: 2}], c: x}\nalso: [1, 2]\nskip2: |\n  text\n",
    "skip: [[[[1]]]]\nkeep: {deep: {er: [1, 2, {x: y}]}}\n",
    "keep: null\nskip: 3\n",
    "- skip: 1\n  keep: 2\n",  # a list root: nothing is left out
    "scalar root\n",
])
def test_only_the_kept_keys_of_a_root_map_are_built_and_they_read_as_the_safe_loader_reads_them(text: str):
    keep = frozenset({"keep", "also"})
    full = yaml.safe_load(text)
    expected = {k: v for k, v in full.items() if k in keep} if isinstance(full, dict) else full
    assert yaml_events.plain_stream(text, keep) == [expected]
    assert yamlio.load(text, "f.yaml", keep) == expected


@pytest.mark.parametrize("skipped", [
    "&a {x: 1}", "*a", "!!binary aGk=", "{when: 2024-13-45}", "[1, [2, [3\n",
])
def test_a_left_out_value_is_held_to_what_building_it_would_be(skipped: str):
    """What the event path does not build is still read by its rules: an anchor, alias, tag, a scalar the safe
    loader refuses or text that is not YAML sends the stream to the composed path, as building it would."""
    text = f"keep: 1\nskip: {skipped}\n"
    assert yaml_events.plain_stream(text, frozenset({"keep"})) is None


def test_a_left_out_value_counts_toward_the_bounds(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(limits.YAML_DEPTH.variable, "4")
    deep = "keep: 1\nskip: [[[[[1]]]]]\n"
    assert yaml_events.plain_stream(deep) is None
    assert yaml_events.plain_stream(deep, frozenset({"keep"})) is None
    monkeypatch.setenv(limits.YAML_NODES.variable, "6")
    many = "keep: 1\nskip: [1, 2, 3, 4, 5, 6]\n"
    assert yaml_events.plain_stream(many) is None
    assert yaml_events.plain_stream(many, frozenset({"keep"})) is None


@pytest.mark.parametrize("text", ["when: 2024-13-45\n", "- [a, {b: 2024-02-30}]\n", "a: &x {d: 2024-00-01}\nb: *x\n"])
def test_a_scalar_yaml_cannot_make_is_an_input_error_at_its_place(text: str):
    """A date the safe loader cannot make (it raises ValueError, not a YAML error) is the file's error, where it
    stands, on either path; never krc's internal error."""
    assert yaml_events.plain_stream(text) is None
    for load in (lambda: yamlio.load(text, "f.yaml"), lambda: yamlio.load_with_positions(text, "f.yaml")):
        with pytest.raises(KrcError) as err:
            load()
        problem = err.value.problems[0]
        assert problem.location is not None and problem.location.line == text.count("\n", 0, text.index("20")) + 1
        assert "reads as a date" in problem.message and problem.help.startswith("quote it")
