"""Frozen dataclass records to JSON-ready data and back, guided by their type hints.

For results krc keeps in its cache (an environment's review): JSON, never pickle, because the cache is a folder on
disk and reading a pickle runs whatever it holds. Reading is strict: any value that does not match the record's
declared types raises ValueError, so a tampered or stale entry is refused, never half-believed.

Supported: dataclasses (their init fields), tuple[X, ...] and fixed tuples, dict[K, V] with str or int keys,
X | None and other unions, Literal, str, int, float, bool, None, and Any (JSON data kept as it is).
"""
from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any

_NATIVE = (str, int, float, bool, type(None))


def to_json(value: Any) -> Any:
    """A record as JSON data (dicts, lists, strings, numbers, booleans, None)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
    if isinstance(value, (tuple, list)):
        return [to_json(item) for item in value]
    if isinstance(value, dict):
        if not all(isinstance(k, (str, int)) and not isinstance(k, bool) for k in value):
            raise TypeError("only str and int dictionary keys can be stored")
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, _NATIVE):
        return value
    raise TypeError(f"a {type(value).__name__} cannot be stored as JSON")


@functools.cache
def _hints(record: type) -> dict[str, Any]:
    return typing.get_type_hints(record)


def from_json(kind: Any, data: Any) -> Any:
    """The value of type `kind` that `to_json` turned into `data`; ValueError when `data` does not fit."""
    if kind is Any:
        return data
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _record(kind, data)
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is tuple:
        if not isinstance(data, list):
            raise ValueError(f"expected a list for {kind}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_json(args[0], item) for item in data)
        if len(args) != len(data):
            raise ValueError(f"expected {len(args)} items for {kind}")
        return tuple(from_json(arg, item) for arg, item in zip(args, data, strict=True))
    if origin is dict:
        if not isinstance(data, dict):
            raise ValueError(f"expected an object for {kind}")
        key_kind = args[0] if args else str
        keys = {k: (int(k) if key_kind is int else k) for k in data}
        return {from_json(key_kind, keys[k]): from_json(args[1] if args else Any, v) for k, v in data.items()}
    if origin in (typing.Union, types.UnionType):
        for arg in sorted(args, key=lambda a: a is not type(None)):  # None first: it never half-matches
            try:
                return from_json(arg, data)
            except ValueError:
                continue
        raise ValueError(f"{data!r} fits none of {kind}")
    if origin is typing.Literal:
        if data not in args or isinstance(data, bool) != any(isinstance(a, bool) for a in args if a == data):
            raise ValueError(f"{data!r} is not one of {args}")
        return data
    if kind is float and isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if kind in _NATIVE and type(data) is kind:
        return data
    raise ValueError(f"{data!r} is not a {kind}")


def _record(kind: type, data: Any) -> Any:
    fields = [f for f in dataclasses.fields(kind) if f.init]
    if not isinstance(data, dict) or set(data) != {f.name for f in fields}:
        raise ValueError(f"expected the fields of {kind.__name__}")
    hints = _hints(kind)
    return kind(**{f.name: from_json(hints[f.name], data[f.name]) for f in fields})
