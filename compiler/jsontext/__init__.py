"""JSON text: the one place krc encodes and decodes it, exactly as the standard library would, faster.

krc writes canonical JSON (sorted keys, no spaces, UTF-8 as it is) for every cache entry and key, and reads it back;
it also speaks JSON to the engine and its helpers. The standard library's encoder was a tenth of a cold `krc lint`'s
Python time. orjson (a C extension made for this) encodes the same data about ten times faster and decodes it about
twice as fast, and gives the standard library's text for nearly everything krc has: these functions take its answer
only when it cannot differ, and otherwise ask the standard library, so what they return is always the standard
library's own (tests/properties holds them to it over arbitrary values):

- encoding: orjson writes NaN and infinities as `null`, and floats below 1e-4 in another form (0.00001, 1e-9 for
  1e-05, 1e-09); its text is not taken when it holds such a float (text that merely looks so, in a string, is given
  to the standard library too), nor when it holds `null` and does not read back as the value (a NaN or an infinity
  reads back as None, which no float equals; Kubernetes objects and the answers about them hold real nulls, and
  reading the text back costs half what the standard library's encoder does). Anything orjson refuses (an int past
  64 bits, a key that is not a string, nesting past 254, a lone surrogate, a type neither knows) goes to the
  standard library, which encodes it or raises as before.
- decoding: orjson reads an int below -2**63 or above 2**64 - 1 as a float and refuses NaN, Infinity and lone
  surrogates (its floats are the standard library's, correctly rounded however many digits they have); text with
  a number that starts with 20 digits, or with a minus and 19, or that orjson refuses, is read by the standard
  library. Digits inside strings do not count (a sha256 digest often holds a run of 20), nor does a number of 19
  digits (a time in nanoseconds, which file signatures hold by the thousand): orjson reads them as it does.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import orjson

# dates and dataclasses go to `default` (or the standard library's refusal) as they do in json.dumps
_PASS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
_SORTED = _PASS | orjson.OPT_SORT_KEYS
# where orjson's text may not be the standard library's: `null` (perhaps a NaN), a float below 1e-4 (0.00001, 1e-9)
_SMALL_EXPONENT = re.compile(rb"e-[0-9](?![0-9])")  # starts with a literal: re scans for it as fast as `in`
# A digit as "1", a minus as "2", what a number may follow in JSON text (a bracket, comma, colon or space) as "3",
# anything else as "0": a number orjson may read as a float (loads) is then one of these substrings; digits that
# follow a quote or a letter are inside a string, where orjson and the standard library read them alike.
_NUMBERS = bytes.maketrans(bytes(range(256)), bytes(
    49 if 48 <= i <= 57 else 50 if i == 45 else 51 if i in b"[,: \t\n\r" else 48 for i in range(256)))
_PAST_64_BITS = (b"3" + b"1" * 20, b"32" + b"1" * 19)


def _may_differ(text: bytes, value: Any) -> bool:
    if b".0000" in text or any(text[m.start() - 1:m.start()].isdigit() for m in _SMALL_EXPONENT.finditer(text)):
        return True
    return b"null" in text and not _reads_back(text, value)


def _reads_back(text: bytes, value: Any) -> bool:
    """Whether orjson's text of `value` reads back as `value`: then each `null` in it is a None of the value, not
    a NaN or an infinity. The text is read as orjson reads it: a float stays a float, an int an int (ints past 64
    bits never get here: orjson refuses to write them); a tuple, or whatever went to `default`, reads back as
    something else, and the standard library has the value as before."""
    try:
        return bool(orjson.loads(text) == value)
    except (TypeError, ValueError):  # orjson.JSONDecodeError is a ValueError; an object of `default`'s may refuse
        return False


def _encoded(value: Any, options: int, sort_keys: bool, default: Callable[[Any], Any] | None) -> bytes | str:
    """orjson's UTF-8 text where it is the standard library's, else the standard library's own text."""
    try:
        text = orjson.dumps(value, default=default, option=options)
    except TypeError:  # orjson.JSONEncodeError is one
        text = None
    if text is None or _may_differ(text, value):
        return json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False, default=default)
    return text


def _text(encoded: bytes | str) -> str:
    return encoded if isinstance(encoded, str) else encoded.decode("utf-8")


def canonical_bytes(value: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=default), UTF-8."""
    encoded = _encoded(value, _SORTED, True, default)
    return encoded.encode("utf-8") if isinstance(encoded, str) else encoded


def canonical(value: Any, default: Callable[[Any], Any] | None = None) -> str:
    """json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=default)."""
    return _text(_encoded(value, _SORTED, True, default))


def compact(value: Any) -> str:
    """json.dumps(value, separators=(",", ":"), ensure_ascii=False): keys in their order."""
    return _text(_encoded(value, _PASS, False, None))


def finite(value: Any) -> str:
    """json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False): ValueError for a NaN or an
    infinity, as it raises."""
    encoded = _encoded(value, _PASS, False, None)
    if isinstance(encoded, str):  # perhaps a NaN or an infinity (orjson's text of them is never taken): it raises
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return encoded.decode("utf-8")


def line(value: Any) -> bytes:
    """compact(value) as UTF-8 bytes, for another process to read; a lone surrogate (which has no UTF-8) is sent
    as the \\u escape json.dumps writes for it by default, so every value it encodes reaches the peer."""
    text = compact(value)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":")).encode("ascii")


def holds_null(value: Any) -> bool:
    """Whether `value` may hold a None anywhere: False only when it surely holds none, as orjson's text of it has no
    `null` (a NaN or an infinity is written so too, a string may hold the word, and a value orjson refuses is
    answered True: each only costs the caller a look of its own)."""
    try:
        return b"null" in orjson.dumps(value, option=_PASS)
    except TypeError:  # orjson.JSONEncodeError is one
        return True


_DECODER = json.JSONDecoder()


def with_member(text: str, key: str, change: Callable[[Any], Any]) -> str | None:
    """canonical(obj) for the object `text` is the canonical text of, with its top-level member `key` made
    `change(value)` (the member's value decoded): the text around that member is kept as it is, and only the
    members before it are read (sorted keys put the small ones of a Kubernetes object, apiVersion and kind, before
    its metadata). None when `text` holds no member `key` (or is not the canonical text of an object): the caller
    decodes it whole."""
    if not text.startswith("{"):
        return None
    at = 1
    try:
        while True:
            name, at = _DECODER.raw_decode(text, at)
            if not isinstance(name, str) or name > key or text[at:at + 1] != ":":
                return None
            start = at + 1
            value, at = _DECODER.raw_decode(text, start)
            if name == key:
                return text[:start] + canonical(change(value)) + text[at:]
            if text[at:at + 1] != ",":
                return None
            at += 1
    except ValueError:  # json.JSONDecodeError: not JSON where a member should be
        return None


def loads(text: str | bytes) -> Any:
    """json.loads(text), raising ValueError (json.JSONDecodeError) as it does."""
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    numbers = b"3" + data.translate(_NUMBERS)  # the text's first number follows nothing
    if not any(run in numbers for run in _PAST_64_BITS):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)
