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
from collections.abc import Callable
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


def from_json(kind: Any, data: Any) -> Any:
    """The value of type `kind` that `to_json` turned into `data`; ValueError when `data` does not fit."""
    return _reader(kind)(data)


Reader = Callable[[Any], Any]


@functools.cache
def _reader(kind: Any) -> Reader:
    """How to read a value of type `kind`, worked out once per type: a review holds a few dozen records, and
    `krc diff` reads one review per environment."""
    if kind is Any:
        return _as_is
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _record_reader(kind)
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is tuple:
        return _tuple_reader(kind, args)
    if origin is dict:
        return _dict_reader(kind, args)
    if origin in (typing.Union, types.UnionType):
        return _union_reader(kind, args)
    if origin is typing.Literal:
        return functools.partial(_literal, args)
    if kind is float:
        return _float
    return functools.partial(_native, kind)


def _as_is(data: Any) -> Any:
    return data


def _record_reader(kind: type) -> Reader:
    fields: list[tuple[str, Reader]] = []  # filled on first use: a record may name its own type

    def read(data: Any) -> Any:
        if not fields:
            hints = typing.get_type_hints(kind)
            fields.extend((f.name, _reader(hints[f.name])) for f in dataclasses.fields(kind) if f.init)
        if not isinstance(data, dict) or data.keys() != {name for name, _ in fields}:
            raise ValueError(f"expected the fields of {kind.__name__}")
        return kind(**{name: read_field(data[name]) for name, read_field in fields})
    return read


def _tuple_reader(kind: Any, args: tuple[Any, ...]) -> Reader:
    if len(args) == 2 and args[1] is Ellipsis:
        read_item = _reader(args[0])

        def read_items(data: Any) -> Any:
            if not isinstance(data, list):
                raise ValueError(f"expected a list for {kind}")
            return tuple(read_item(item) for item in data)
        return read_items
    readers = tuple(_reader(arg) for arg in args)

    def read_fixed(data: Any) -> Any:
        if not isinstance(data, list):
            raise ValueError(f"expected a list for {kind}")
        if len(readers) != len(data):
            raise ValueError(f"expected {len(readers)} items for {kind}")
        return tuple(read(item) for read, item in zip(readers, data, strict=True))
    return read_fixed


def _dict_reader(kind: Any, args: tuple[Any, ...]) -> Reader:
    int_keys = bool(args) and args[0] is int
    read_key, read_value = _reader(args[0] if args else str), _reader(args[1] if args else Any)

    def read(data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError(f"expected an object for {kind}")
        return {read_key(int(k) if int_keys else k): read_value(v) for k, v in data.items()}
    return read


def _union_reader(kind: Any, args: tuple[Any, ...]) -> Reader:
    # None first: it never half-matches
    readers = tuple(_reader(arg) for arg in sorted(args, key=lambda a: a is not type(None)))

    def read(data: Any) -> Any:
        for each in readers:
            try:
                return each(data)
            except ValueError:
                continue
        raise ValueError(f"{data!r} fits none of {kind}")
    return read


def _literal(args: tuple[Any, ...], data: Any) -> Any:
    if data not in args or isinstance(data, bool) != any(isinstance(a, bool) for a in args if a == data):
        raise ValueError(f"{data!r} is not one of {args}")
    return data


def _float(data: Any) -> Any:
    if isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if type(data) is float:
        return data
    raise ValueError(f"{data!r} is not a {float}")


def _native(kind: Any, data: Any) -> Any:
    if kind in _NATIVE and type(data) is kind:
        return data
    raise ValueError(f"{data!r} is not a {kind}")
