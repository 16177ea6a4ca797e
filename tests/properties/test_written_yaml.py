"""Property tests (hypothesis) of the text writer (yaml_text): the bytes of PyYAML's canonical dumper, or None where
it leaves the document to the event path, and only there."""
from __future__ import annotations

from typing import Any

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler.documents import yaml_scalars, yaml_text, yamlio

SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow])  # examples: the profile's (tests/conftest.py)

# libyaml's line breaks, written out here rather than taken from the code under test
BREAKS = "\r\n\x85\u2028\u2029"


def pyyaml(document: Any) -> str:
    return yaml.dump(document, Dumper=yamlio._CanonicalDumper, sort_keys=True, default_flow_style=False,
                     allow_unicode=True, width=yamlio.DUMP_WIDTH, explicit_start=False)


def left_to_the_event_path(document: Any) -> bool:
    """What the text writer does not write: a root that is no map or list, a key the emitter writes as a complex
    key (a line break, or over 128 bytes), a map whose keys do not sort (no strategy here shares a container)."""
    if type(document) not in (dict, list):
        return True

    def left(value: Any) -> bool:
        if isinstance(value, dict):
            try:
                sorted(value.items())
            except TypeError:
                return True
            return (any(isinstance(k, str) and (any(b in k for b in BREAKS) or len(k.encode("utf-8")) > 128)
                        for k in value)
                    or any(left(v) for v in value.values()))
        return isinstance(value, list) and any(left(v) for v in value)
    return left(document)


# Pieces of text the emitter treats apart: line breaks (libyaml's five), blanks, indicators, quotes, escapes, text
# that reads back as something else, characters it must escape (BOM, NUL, DEL) or may write as they are
FRAGMENTS = ["\n", "\n\n", "\r", "\r\n", "\x85", "\u2028", "\u2029", " ", "  ", "\t", "#", ": ", ":", "- ", "-",
             "---", "...", "? ", "|", ">", "'", '"', "\\", "&a", "*a", "!t", "%", "@", "`", "{", "}", "[", "]",
             ",", "~", "=", "<<", "\ufeff", "\u00a0", "\x00", "\x07", "\x7f", "é", "\u4e2d", "\U0001f600", "a",
             "b c", "x", "1", "0", "true", "No", "null", "0x1F", "0o17", "1_000", "1.5e3", ".inf", "-.inf",
             ".nan", "2024-01-01", "1:20", "y"]
fragment_text = st.lists(st.sampled_from(FRAGMENTS), max_size=6).map("".join)
# words for the rule that writes plain words without asking the emitter (yaml_scalars._proven_text): letters,
# digits, dots, slashes, colons, dashes, as names, versions, numbers, times and dates are made of
words = st.text(alphabet="aZyYnN0189._/:-+eExXoObB", min_size=1, max_size=10)
texts = st.one_of(st.text(max_size=30), fragment_text, words)
long_keys = st.one_of(st.integers(120, 140).map(lambda n: "k" * n), st.integers(60, 68).map(lambda n: "é" * n),
                      st.text(min_size=100, max_size=200))
floats = st.one_of(st.floats(), st.sampled_from([float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1e-20,
                                                 1e300, 1e16, 5e-324, 1.5, -2.0, 1e-05]))
integers = st.one_of(st.integers(), st.sampled_from([0, -1, 2**63, -(2**64), 10**30, 1_000]))
scalars = st.one_of(st.none(), st.booleans(), integers, floats, texts)
text_keys = st.one_of(texts, long_keys)


def containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.lists(inner, max_size=4), st.dictionaries(text_keys, inner, max_size=4),
                     st.dictionaries(integers, inner, max_size=3), st.dictionaries(floats, inner, max_size=2),
                     st.dictionaries(st.one_of(st.booleans(), st.none()), inner, max_size=2),
                     st.builds(dict), st.builds(list))  # new ones: a shared one is written as an alias


written = st.recursive(scalars, containers, max_leaves=30)


def forget() -> None:
    for place in (yaml_scalars.KEYS, yaml_scalars.VALUES, yaml_scalars.ITEMS):
        place.clear()


def check(document: Any, cold: bool) -> None:
    """Twice: the second from what the first left in the places (`cold`: starting from empty places)."""
    if cold:
        forget()
    expected = pyyaml(document)
    for _ in range(2):
        text = yaml_text.plain_text(document, yamlio.DUMP_WIDTH)
        assert text == (None if left_to_the_event_path(document) else expected)
    assert yamlio.dump(document) == expected


@SETTINGS
@given(written, st.booleans())
@example({"a": "x\n\n", "b": "plain"}, True)  # a block kept with its line breaks leaves the document open: "..."
@example({"a": "x\n\n", "b": "y\n"}, True)  # until another block scalar closes it
@example({"k": {"j": "a\u2028b"}, "l": ["a\u2028b"]}, True)  # a quoted scalar over lines, indented as it is nested
@example([[["a\nb\n", " lead\n", "\n"]], {"x": [[{}], []]}], True)
@example({"k" * 128: 1, "é" * 64: 2, "": "", "true": "1", "a:": "a:b"}, True)
@example({"k" * 129: 1}, True)  # a complex key ("? "): left to the event path
@example({"é" * 65: 1}, True)  # 130 bytes
def test_the_text_writer_writes_what_pyyaml_writes(document: Any, cold: bool) -> None:
    check(document, cold)


# multi-line and other tricky text at any depth, in maps and lists, to exercise text asked for per column
nesting = st.lists(st.sampled_from(["map", "list", "list-first-map"]), max_size=100)
tricky = st.one_of(fragment_text, st.sampled_from(["x\n", "x\ny", " x\n", "x\n\n", "\n", "a\x85b", "a\u2028 b\n",
                                                   "\tt\n", "a \nb", "x\n "]))


def nested(path: list[str], leaf: Any, sibling: Any) -> Any:
    for step in reversed(path):
        if step == "map":
            leaf = {"k": leaf, "z": sibling}
        elif step == "list":
            leaf = [leaf, sibling]
        else:  # a list whose map item starts on the dash's line
            leaf = [{"a": leaf, "b": sibling}]
    return leaf


@SETTINGS
@given(nesting, tricky, st.one_of(tricky, st.integers()), st.booleans())
def test_text_over_lines_is_written_at_any_depth(path: list[str], leaf: str, sibling: Any, cold: bool) -> None:
    check(nested(path, leaf, sibling) if path else {"k": leaf}, cold)
