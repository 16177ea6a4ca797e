"""compiler.jsontext gives exactly the standard library's JSON text and values, over arbitrary data: the
differences orjson has (NaN, small floats, ints past 64 bits, lone surrogates, dates) are where it asks json."""
from __future__ import annotations

import dataclasses
import datetime
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import jsontext

SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow])

keys = st.text(max_size=12)
# ints at the edges of orjson's range (-2**63 .. 2**64 - 1), where a number of 19 or 20 digits may fall either side
edges = st.sampled_from([-(2**63) - 1, -(2**63), 2**63 - 1, 2**63, 2**64 - 1, 2**64, 10**19 - 1, 10**19, -(10**18),
                         -(10**19) + 1])
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=-(2**70), max_value=2**70),
                    st.integers(min_value=-(2**65), max_value=2**65), edges, st.builds(lambda n: n + 0.5, edges),
                    st.floats(), st.floats(min_value=-1e-3, max_value=1e-3), st.text(max_size=40),
                    st.sampled_from(["null", "0.00001", "1e-9", "9" * 25, "12345678901234567890", "-" + "9" * 19]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner),
                                                      st.dictionaries(keys, inner, max_size=4)), max_leaves=30)


def _std(value: Any, sort_keys: bool, default: Any = None, allow_nan: bool = True) -> str | type[Exception]:
    try:
        return json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False, default=default,
                          allow_nan=allow_nan)
    except (TypeError, ValueError) as err:
        return type(err)


def _ours(encode: Any, value: Any, *args: Any) -> str | type[Exception]:
    try:
        return str(encode(value, *args))
    except (TypeError, ValueError) as err:
        return type(err)


@SETTINGS
@given(values)
@example({"a": "\ud800", "b": "\u00e9"})
def test_a_line_for_a_peer_reads_back_as_the_value_json_reads(value: Any) -> None:
    try:
        want = json.loads(json.dumps(value, separators=(",", ":")))  # a lone surrogate escaped, as before
    except (TypeError, ValueError) as err:
        with pytest.raises(type(err)):
            jsontext.line(value)
        return
    sent = jsontext.line(value)
    text = sent.decode("utf-8")  # UTF-8, whatever the value holds
    assert "\n" not in text  # one line
    assert json.dumps(json.loads(text)) == json.dumps(want)  # compared as text: a NaN is never equal to itself


@SETTINGS
@given(values)
@example(float("nan"))
@example([float("inf"), None])
@example(1e-05)
@example([2.5e-07, 1.5e-300])
@example(2**64)
@example({"a": "\ud800"})
@example("\x00\x1f\x7f\u2028\U0001f600\"\\/")
@example({"b": None, "a": [1.5, None, "null", True, 1, 1.0]})  # real nulls: orjson's text, read back
@example({"b": None, "a": [float("-inf")]})
@example([None, (None, float("nan"))])
def test_encoding_is_the_standard_librarys(value: Any) -> None:
    assert _ours(jsontext.canonical, value) == _std(value, True)
    assert _ours(jsontext.compact, value) == _std(value, False)
    assert _ours(jsontext.finite, value) == _std(value, False, allow_nan=False)
    canonical = _std(value, True)
    if isinstance(canonical, str):
        try:
            want: bytes | type[Exception] = canonical.encode("utf-8")
        except UnicodeEncodeError as err:  # a lone surrogate: no UTF-8 for it, as before
            want = type(err)
        assert _ours(jsontext.canonical_bytes, value) == (str(want) if isinstance(want, bytes) else want)


@SETTINGS
@given(values)
def test_decoding_is_the_standard_librarys(value: Any) -> None:
    canonical = _std(value, True)
    if not isinstance(canonical, str):
        return
    for text in (canonical, json.dumps(value, ensure_ascii=True)):
        want = json.loads(text)
        got = jsontext.loads(text)
        assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)  # NaN == NaN here
        assert [type(x) for x in _leaves(got)] == [type(x) for x in _leaves(want)]  # an int stays an int
        if not any("\ud800" <= c <= "\udfff" for c in text):
            assert json.dumps(jsontext.loads(text.encode("utf-8")), sort_keys=True) == json.dumps(want, sort_keys=True)


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


@pytest.mark.parametrize("text", ["[1,]", "{'a': 1}", "\"a\nb\"", "01", "[1] x", "", "\ufeff[1]", "NaN", "-Infinity",
                                  "[1e400]", "\"\\ud800\"", "123456789012345678901234567890", "18446744073709551616",
                                  "[18446744073709551615]", "[ -9223372036854775809]", "{\"a\":\n-9223372036854775808}",
                                  "{\"a\": 99999999999999999999}", "-09223372036854775809", "1234567890123456789.5",
                                  "[0.12345678901234567890123,1e1234567890123456789]", "-12345678901234567890e-3"])
def test_text_the_standard_library_refuses_or_reads_oddly_is_its_answer(text: str) -> None:
    try:
        want: Any = json.loads(text)
    except ValueError as err:
        with pytest.raises(ValueError) as raised:
            jsontext.loads(text)
        assert type(raised.value) is type(err)
        return
    assert json.dumps(jsontext.loads(text)) == json.dumps(want)


def test_nanosecond_times_and_digests_are_read_without_the_standard_library(monkeypatch: pytest.MonkeyPatch) -> None:
    """File signatures hold thousands of 19-digit times beside sha256 digests, many of which hold a run of 20 digits:
    orjson reads them as the standard library does, so it is not asked (reading the stamps of 500 output folders
    with the standard library took three times as long)."""
    text = jsontext.canonical({"b652481159421064424441d97841a9cb30d72b200": [[1765036800123456789, 42, -1, 7.5]],
                               "a": "12345678901234567890123", "n": -999999999999999999})

    def refuse(_: object) -> None:
        raise AssertionError("the standard library was asked")
    monkeypatch.setattr(jsontext.json, "loads", refuse)
    assert jsontext.loads(text) == {"b652481159421064424441d97841a9cb30d72b200": [[1765036800123456789, 42, -1, 7.5]],
                                    "a": "12345678901234567890123", "n": -999999999999999999}


@dataclasses.dataclass
class _Point:
    x: int


@pytest.mark.parametrize("value", [datetime.date(2026, 12, 4), datetime.datetime(2026, 12, 4, 5, 6, 7), _Point(1),
                                   b"bytes", {1, 2}, {1: "int key"}, {1: "a", "b": 2}])
def test_what_json_hands_to_default_goes_to_default(value: Any) -> None:
    assert _ours(jsontext.canonical, value, str) == _std(value, True, str)
    assert _ours(jsontext.canonical, value) == _std(value, True)


def test_nesting_past_orjsons_limit_is_encoded_by_the_standard_library() -> None:
    deep: Any = 1
    for _ in range(400):
        deep = [deep]
    assert jsontext.canonical(deep) == json.dumps(deep, separators=(",", ":"))
    assert jsontext.loads(jsontext.canonical(deep)) == deep


objects = st.dictionaries(keys, values, max_size=6)


def _annotate(value: Any) -> Any:
    return {"was": value, "note": "é\u2028"}


@SETTINGS
@given(objects, keys)
@example({"apiVersion": "v1", "kind": "K", "metadata": {"name": "x"}, "spec": {"n": [1.5, None]}}, "metadata")
@example({"a": float("nan"), "b": 1}, "b")
def test_a_member_made_anew_in_canonical_text_is_the_canonical_text_of_the_changed_object(obj: dict[str, Any],
                                                                                         key: str) -> None:
    text = _std(obj, True)
    if not isinstance(text, str):  # json refuses it: nothing canonical to start from
        return
    spliced = jsontext.with_member(text, key, _annotate)
    if key not in obj:
        assert spliced is None
        return
    assert spliced == _std({**obj, key: _annotate(json.loads(text)[key])}, True)


def test_a_member_is_not_found_in_what_is_not_an_object():
    for text in ("[1]", "{}", '"metadata"', "", '{"metadata"', '{"metadata":'):
        assert jsontext.with_member(text, "metadata", _annotate) is None


def _has_none(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, dict):
        return any(_has_none(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_none(v) for v in value)
    return False


@SETTINGS
@given(values)
@example({"a": [1, {"b": None}]})
@example({"a": "null"})
@example({2**70: 1})
def test_a_value_said_to_hold_no_null_holds_none(value: Any) -> None:
    if _has_none(value):
        assert jsontext.holds_null(value)


def test_a_value_without_null_is_said_to_hold_none() -> None:
    """What lets callers skip their walk: plain data without a None, a NaN or the word in a string."""
    assert not jsontext.holds_null({"kind": "RayCluster", "spec": {"replicas": 2, "ratio": 0.5, "on": True,
                                                                   "args": ["a", "b"], "empty": {}}})
    assert jsontext.holds_null({"spec": {"args": [1, None]}})
    assert jsontext.holds_null({"a": float("nan")})  # written as null: the caller looks
