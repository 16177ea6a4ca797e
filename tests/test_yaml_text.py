"""The text writer of yamlio.dump (yaml_text) on real documents, what it leaves to the event path, and its bounds;
tests/properties/test_written_yaml.py holds it to PyYAML's bytes on generated data."""
from __future__ import annotations

from typing import Any

import pytest
import yaml
from project_support import FIXTURE_PROJECT, REPO_ROOT

from compiler.documents import yaml_scalars, yaml_text, yamlio

GOLDEN_FILES = sorted({*(FIXTURE_PROJECT / "golden").rglob("*.yaml"), *(REPO_ROOT / "golden").rglob("*.yaml")})


def pyyaml(document: Any) -> str:
    return yaml.dump(document, Dumper=yamlio._CanonicalDumper, sort_keys=True, default_flow_style=False,
                     allow_unicode=True, width=yamlio.DUMP_WIDTH, explicit_start=False)


def forget() -> None:
    for place in (yaml_scalars.KEYS, yaml_scalars.VALUES, yaml_scalars.ITEMS):
        place.clear()


def test_there_are_golden_files() -> None:
    assert len(GOLDEN_FILES) >= 30


@pytest.mark.parametrize("cold", [True, False], ids=["cold", "warm"])
def test_every_golden_file_is_written_back_as_it_is_by_the_text_writer(cold: bool) -> None:
    """Cold: each file from empty places (the emitter asked for every scalar); warm: after all the others."""
    for path in GOLDEN_FILES:
        text = path.read_text(encoding="utf-8")
        if cold:
            forget()
        written = yaml_text.plain_text(yamlio.load(text), yamlio.DUMP_WIDTH)
        assert written == text, path  # not None: the text writer wrote it, not the event path
        assert yamlio.dump(yamlio.load(text)) == text


def test_golden_files_have_what_the_writer_must_get_right() -> None:
    """The real documents hold literal blocks, lists of maps, quoted scalars and empty maps."""
    every = "".join(path.read_text(encoding="utf-8") for path in GOLDEN_FILES)
    for piece in (": |", "- name:", ": '", ": {}"):
        assert piece in every, piece


@pytest.mark.parametrize("document", [
    "text", 1, None, 1.5, True,  # a root that is no map or list (PyYAML may end it with "...")
    {"k" * 129: 1}, {"é" * 65: 1}, {"a\nb": 1}, {"a\x85": 1}, {"a\u2028b": 1}, {"a\rb": 1},  # complex keys
    {1: "a", "b": 2}, {None: 1, "a": 2},  # keys that do not sort: PyYAML keeps their order
    {"when": (1, 2)}, {"s": {1, 2}}, {"b": b"x"},  # not plain data
])
def test_what_the_text_writer_leaves_goes_to_the_event_path_or_pyyaml(document: Any) -> None:
    assert yaml_text.plain_text(document, yamlio.DUMP_WIDTH) is None
    try:
        expected = pyyaml(document)
    except yaml.YAMLError:  # PyYAML's safe dumper refuses it: so does dump
        with pytest.raises(yaml.YAMLError):
            yamlio.dump(document)
        return
    assert yamlio.dump(document) == expected


def test_a_shared_map_or_list_is_left_for_pyyaml_to_alias() -> None:
    shared: dict[str, Any] = {"a": 1}
    empty: list[Any] = []
    for document in ({"x": shared, "y": shared}, [empty, empty], {"x": [shared], "y": shared}):
        assert yaml_text.plain_text(document, yamlio.DUMP_WIDTH) is None
        assert "&id001" in yamlio.dump(document)


def test_a_text_subclass_is_not_plain_text() -> None:
    class Name(str):
        pass

    yamlio.dump({"a": "b"})  # "a" and "b" known to the places
    for document in ({Name("a"): "b"}, {"a": Name("b")}, [Name("b")]):
        assert yaml_text.plain_text(document, yamlio.DUMP_WIDTH) is None
        with pytest.raises(yaml.YAMLError):
            yamlio.dump(document)


@pytest.mark.parametrize("depth", [1, 60, 100, 140])
def test_deep_nesting_past_the_indentation_made_ahead(depth: int) -> None:
    document: Any = {"text": "a\nb\n", "open": "c\n\n", "quoted": "d\u2028e", "word": "w"}
    for level in range(depth):
        document = [{"k": document, "l": ["x\n"]}] if level % 3 == 0 else [document, "w"]
    forget()
    written = yaml_text.plain_text(document, yamlio.DUMP_WIDTH)
    assert written == pyyaml(document)
    if depth == 140:  # past the 200 columns of indentation made ahead
        assert max(len(line) - len(line.lstrip(" -")) for line in written.splitlines()) > 200


def pyyaml_at(document: Any, width: int) -> str:
    return yaml.dump(document, Dumper=yamlio._CanonicalDumper, sort_keys=True, default_flow_style=False,
                     allow_unicode=True, width=width)


def test_text_near_the_width_is_left_to_the_emitter() -> None:
    width = yaml_text._MIN_WIDTH
    folded = {"k": "word " * (width // 4)}
    assert pyyaml_at(folded, width).count("\n") > 1  # the emitter breaks the line past its width
    assert yaml_text.plain_text(folded, width) is None
    short = {"k": "word " * 10, "l": ["x" * 1000]}
    forget()
    assert yaml_text.plain_text(short, width) == pyyaml_at(short, width)
    assert yaml_text.plain_text({"k": 1}, 80) is None  # a narrow width: the event path's


def test_the_places_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yaml_scalars, "_KEPT", 10)
    forget()
    places = (yaml_scalars.KEYS, yaml_scalars.VALUES, yaml_scalars.ITEMS)
    for n in range(20):
        # the same block scalar, known after the first, then forgotten with the rest: the document still ends "..."
        document = {"open": "x\n\n", **{f"key{n}-{i}": f"value {n} {i}" for i in range(5)}}
        assert yaml_text.plain_text(document, yamlio.DUMP_WIDTH) == pyyaml(document)
        # the bound, plus what one document adds (values count twice: items share them)
        assert sum(place.size() for place in places) <= 3 * 10 + 20
