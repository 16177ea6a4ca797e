"""A yes/no answer to "is this instance valid against this JSON schema?", compiled once per schema.

jsonschema's validators walk a document by evolving a validator object per subschema and looking references up in
a registry on every visit: correct, and most of krc's validation time when nothing is wrong, which is almost
always. `compile_validity` turns a draft 2020-12 schema into nested closures that only answer yes or no, for the
keywords the schemas krc validates with use (type, properties, additionalProperties, items, required, enum, the
numeric and length bounds, pattern and format as the caller's validator reads them, $ref and the combinators).
Callers ask it first and run the full validator only for a "no", whose errors they report; a schema that uses
anything else (or another draft) compiles to None, and callers always run the full validator; a referenced schema
is compiled when a document first reaches it, and one that uses anything else turns every later answer into "no"
(not known). For a "yes" to be
trusted the two must agree exactly on validity: tests/test_quick_validity.py compares them on real documents and
on random changes to them.
"""
from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

Check = Callable[[Any], bool]
Lookup = Callable[[str], Any]  # an absolute URI, fragment included -> the schema it names
Formats = Callable[[Any, str], bool]  # (instance, format name) -> whether it conforms
DRAFT = "https://json-schema.org/draft/2020-12/schema"

# Keywords that never fail an instance (annotations); `$defs` holds schemas reached only through $ref, and `$id`
# (only the root's is compiled) names the base references are read against.
_NOT_CHECKS = frozenset({"description", "title", "default", "examples", "$schema", "$defs", "$id",
                         "$comment", "deprecated", "readOnly", "writeOnly"})


class Unsupported(Exception):
    """A keyword (or form of one) this module does not compile: the full validator must decide."""


def _is_number(instance: Any) -> bool:
    return isinstance(instance, numbers.Number) and not isinstance(instance, bool)


# jsonschema's own draft 2020-12 type checker, predicate for predicate (a test compares them)
TYPE_PREDICATES: dict[str, Check] = {
    "object": lambda instance: isinstance(instance, dict),
    "array": lambda instance: isinstance(instance, list),
    "string": lambda instance: isinstance(instance, str),
    "integer": lambda instance: (isinstance(instance, int) and not isinstance(instance, bool))
    or (isinstance(instance, float) and instance.is_integer()),
    "number": _is_number,
    "boolean": lambda instance: isinstance(instance, bool),
    "null": lambda instance: instance is None,
}


RequiredFilter = Callable[[tuple[str, ...]], tuple[str, ...]]
PatternMatcher = Callable[[str], Callable[[str], object]]


class _Compiler:
    def __init__(self, lookup: Lookup, pattern: PatternMatcher | None,
                 required: RequiredFilter | None, formats: Formats | None) -> None:
        self.lookup = lookup
        self.formats = formats
        self.pattern = pattern
        self.required = required
        # a referenced schema, once per (uri, whether its errors surface): schemas refer to themselves
        self.by_uri: dict[tuple[str, bool], list[Check]] = {}

    def reference(self, ref: str, base: str, surfaces: bool) -> Check:
        """The referenced schema's check, compiled when a document first reaches it: a Kubernetes kind refers to
        thousands of definitions, of which one object touches a few dozen (a one-environment command would
        otherwise spend more compiling than it saves)."""
        uri = urljoin(base, ref)
        cell = self.by_uri.setdefault((uri, surfaces), [])

        def check(instance: Any) -> bool:
            if not cell:
                try:
                    target = self.lookup(uri)
                except (KeyError, IndexError, ValueError) as err:  # the full validator decides
                    raise Unsupported(f"$ref {ref}") from err
                cell.append(self.schema(target, urldefrag(uri).url, surfaces))
            return cell[0](instance)
        return check

    def schema(self, schema: Any, base: str, surfaces: bool) -> Check:
        """`surfaces`: this schema's own errors would reach the caller (not wrapped by anyOf, oneOf or not)."""
        if schema is True:
            return lambda instance: True
        if schema is False:
            return lambda instance: False
        if not isinstance(schema, dict):
            raise Unsupported("a schema that is not a map")
        if "$id" in schema and urljoin(base, str(schema["$id"])) != base:
            raise Unsupported("$id below the root")
        compiled = [self.keyword(name, value, schema, base, surfaces) for name, value in schema.items()
                    if name not in _NOT_CHECKS and not name.startswith("x-")]
        return _every([check for check in compiled if check is not None])

    def keyword(self, name: str, value: Any, schema: dict[str, Any], base: str, surfaces: bool) -> Check | None:
        if name == "type":
            return _type(value)
        if name == "$ref":
            return self.reference(str(value), base, surfaces)
        if name == "properties":
            return self.properties(value, schema, base, surfaces)
        if name == "additionalProperties":  # judged with `properties`, which knows which keys are additional
            return None if "properties" in schema else self.properties({}, schema, base, surfaces)
        if name == "items":
            if isinstance(value, list) or "prefixItems" in schema:
                raise Unsupported("items as a list")
            return _each_item(self.schema(value, base, surfaces))
        if name == "required":
            required = tuple(str(field) for field in value)
            if surfaces and self.required is not None:  # the caller ignores some of what would surface
                required = self.required(required)
            fields = frozenset(required)
            return lambda instance: not isinstance(instance, dict) or instance.keys() >= fields
        if name == "format":  # asserted only when the validator has a format checker
            formats = self.formats
            return None if formats is None else lambda instance: formats(instance, str(value))
        if name in _BOUNDS:
            return _bound(name, value)
        if name == "pattern":
            if self.pattern is None:
                raise Unsupported("pattern")
            search = self.pattern(str(value))
            return lambda instance: not isinstance(instance, str) or bool(search(instance))
        if name == "enum":
            return _enum(value)
        if name in ("oneOf", "anyOf", "allOf"):
            # an option's errors surface only through allOf; anyOf, oneOf and not report their own
            options = [self.schema(option, base, surfaces and name == "allOf") for option in value]
            if name == "oneOf":
                return lambda instance: sum(1 for option in options if option(instance)) == 1
            if name == "anyOf":
                return lambda instance: any(option(instance) for option in options)
            return _every(options)
        if name == "not":
            negated = self.schema(value, base, False)
            return lambda instance: not negated(instance)
        raise Unsupported(name)

    def properties(self, value: Any, schema: dict[str, Any], base: str, surfaces: bool) -> Check:
        if "patternProperties" in schema or not isinstance(value, dict):
            raise Unsupported("patternProperties")
        known = {str(key): self.schema(sub, base, surfaces) for key, sub in value.items()}
        extra = schema.get("additionalProperties", True)
        other = None if extra is True else self.schema(extra, base, surfaces)

        def check(instance: Any) -> bool:
            if not isinstance(instance, dict):
                return True
            for key, item in instance.items():
                sub = known.get(key) if isinstance(key, str) else None
                if sub is None:
                    if other is not None and not other(item):
                        return False
                elif not sub(item):
                    return False
            return True
        return check


# The closures below loop themselves rather than hand a generator to all(): a document's check calls them once per
# node, and a generator per call was a third of the time

def _every(checks: list[Check]) -> Check:
    """All of `checks` (in order: the cheap type check a schema starts with fails first)."""
    if not checks:
        return lambda instance: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda instance: first(instance) and second(instance)

    def check(instance: Any) -> bool:
        for each in checks:
            if not each(instance):
                return False
        return True
    return check


def _each_item(item: Check) -> Check:
    def check(instance: Any) -> bool:
        if not isinstance(instance, list):
            return True
        for each in instance:
            if not item(each):
                return False
        return True
    return check


def _type(value: Any) -> Check:
    names = [value] if isinstance(value, str) else list(value)
    if any(name not in TYPE_PREDICATES for name in names):
        raise Unsupported(f"type {value}")
    predicates = [TYPE_PREDICATES[name] for name in names]
    if len(predicates) == 1:
        return predicates[0]
    return lambda instance: any(predicate(instance) for predicate in predicates)


_BOUNDS = ("minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems")


def _bound(name: str, value: Any) -> Check:
    if not _is_number(value):
        raise Unsupported(f"{name} {value!r}")
    if name in ("minimum", "maximum"):
        low = name == "minimum"
        return lambda instance: not _is_number(instance) or (instance >= value if low else instance <= value)
    sized = TYPE_PREDICATES["string" if name.endswith("Length") else "array"]
    low = name.startswith("min")
    return lambda instance: not sized(instance) or (len(instance) >= value if low else len(instance) <= value)


def _enum(value: Any) -> Check:
    """Enums of scalars, compared as jsonschema compares them: text equals text only, a boolean equals the same
    boolean only (never 1 or 0), numbers equal by value."""
    if not isinstance(value, list) or not all(v is None or isinstance(v, (str, bool, int, float)) for v in value):
        raise Unsupported("an enum of lists or maps")
    texts = frozenset(v for v in value if isinstance(v, str))
    booleans = frozenset(v for v in value if isinstance(v, bool))
    numbers_ = [v for v in value if _is_number(v)]
    null = None in value

    def check(instance: Any) -> bool:
        if isinstance(instance, str):
            return instance in texts
        if isinstance(instance, bool):
            return instance in booleans
        if instance is None:
            return null
        return _is_number(instance) and any(instance == number for number in numbers_)
    return check


def pointer_lookup(*documents: dict[str, Any]) -> Lookup:
    """References into `documents`, each known by its `$id`, whose fragment is a JSON pointer (RFC 6901):
    `$defs` and `definitions` as the schemas krc validates with use them. Any other reference (an anchor, a
    document not given, a pointer to nothing) raises KeyError, and the full validator decides."""
    by_uri = {str(document.get("$id", "")): document for document in documents}

    def lookup(uri: str) -> Any:
        url, fragment = urldefrag(uri)
        node: Any = by_uri[url]
        if fragment and not fragment.startswith("/"):
            raise KeyError(f"anchor {fragment}")
        for token in fragment.split("/")[1:] if fragment else ():
            token = unquote(token).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict):
                node = node[token]
            elif isinstance(node, list) and token.isdigit():
                node = node[int(token)]
            else:
                raise KeyError(token)
        return node
    return lookup


def compile_validity(schema: dict[str, Any], lookup: Lookup, *,
                     pattern: PatternMatcher | None = None, required: RequiredFilter | None = None,
                     formats: Formats | None = None) -> Check | None:
    """The yes/no check of `schema` (its references, resolved against its $id, looked up with `lookup`: see
    pointer_lookup), or None when
    it uses what this module does not compile. `pattern(regex)` gives the search function the validator uses for
    `pattern` (none: patterns are not compiled). `required(fields)` gives the fields of a `required` list whose
    absence counts when its error would reach the caller; callers that drop some of those errors say so here.
    `formats`: the validator's format check, when it asserts formats."""
    if schema.get("$schema", DRAFT) != DRAFT:  # the keywords above as that draft defines them
        return None
    base = str(schema.get("$id", ""))
    compiler = _Compiler(lookup, pattern, required, formats)
    try:
        root = compiler.schema(schema, base, True)
    except (Unsupported, RecursionError):
        return None
    unsupported: list[bool] = []  # a referenced schema met on the way used what this module does not compile

    def check(instance: Any) -> bool:
        """True: valid. False: invalid, or not known (the caller's full validator decides either way)."""
        if unsupported:
            return False
        try:
            return root(instance)
        except Unsupported:
            unsupported.append(True)
            return False
        except RecursionError:  # this instance nests too deep for the closures; the next one may not
            return False
    return check
