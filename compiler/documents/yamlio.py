"""YAML in and out: loading that keeps line numbers, and one canonical dump used for every written file.

The C loader and dumper are used when PyYAML was built with libyaml; both produce the same data and bytes.
"""
from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import yaml

from ..diagnostics.problems import KrcError, Location, Problem
from ..settings import limits
from . import yaml_emit, yaml_text
from .yaml_events import first_too_deep, plain_documents, plain_stream, positioned_documents

SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
SafeDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

# Path of a value inside a document: map keys and list indexes.
Path = tuple[Any, ...]
Positions = dict[Path, Location]
PositionLookup = Mapping[Path, Location]  # what readers of positions need (provenance works them out lazily)


def _mark(filename: str, node: yaml.Node) -> Location:
    return Location(filename, node.start_mark.line + 1, node.start_mark.column + 1)


_NO_SPACE = re.compile(r"^\s*(?:- )?([A-Za-z0-9_.-]+):([^\s/:].*)$")


def _plain_words(err: yaml.YAMLError, lines: list[str]) -> tuple[str, str, int | None, int]:
    """(statement, fix, 0-based line, 0-based column) of a parser error, said as a person would, at the line the
    mistake is on (the parser often notices it a line later)."""
    problem = str(getattr(err, "problem", None) or err)
    mark = getattr(err, "problem_mark", None)
    context = getattr(err, "context_mark", None)
    line, column = (mark.line, mark.column) if mark else (None, 0)
    if "could not find expected ':'" in problem and context is not None:
        text = lines[context.line] if context.line < len(lines) else ""
        match = _NO_SPACE.match(text)
        if match:
            return (f"'{match.group(1)}:{match.group(2)}' needs a space after the colon to be a key and a value",
                    f"write {match.group(1)}: {match.group(2)}", context.line, text.index(match.group(1)))
        return ("this line is not a 'key: value' entry", "add ': ' after the key, or join it to the line above",
                context.line, context.column)
    if "cannot start any token" in problem and line is not None and "\t" in lines[line][: column + 1]:
        return "a tab is used for indentation; YAML allows only spaces", "indent with spaces", line, column
    if "expected ',' or ']'" in problem or "expected ',' or '}'" in problem:
        bracket = "]" if "]" in problem else "}"
        opened = context.line if context is not None else line
        return (f"the {'list' if bracket == ']' else 'map'} opened on line {(opened or 0) + 1} is not closed",
                f"add '{bracket}' at its end", opened, context.column if context is not None else column)
    if "end of stream" in problem and "quoted scalar" in str(getattr(err, "context", "")) and context is not None:
        return (f"the quote opened on line {context.line + 1} is never closed", "add the closing quote",
                context.line, context.column)
    if "did not find expected key" in problem and line is not None:
        for back in range(line - 1, max(-1, line - 50), -1):
            text = lines[back].split(" #", 1)[0]
            for quote in ("'", '"'):
                if text.count(quote) % 2 == 1:
                    return (f"the {quote} quote opened on line {back + 1} is never closed",
                            f"add the closing {quote}", back, text.index(quote))
    if "expected node content" in problem:
        return ("a value is missing here: an unclosed '[' or '{', or nothing after a '-' or ':'",
                "close the bracket or write the value", line, column)
    if "expected '-' indicator" in problem or "expected <block end>" in problem or "expected key" in problem:
        return ("this line's indentation does not match the lines above it",
                "indent it exactly like the other keys of the same item (spaces, not tabs)", line, column)
    if "mapping values are not allowed" in problem:
        return ("a ': ' appears where a value was expected: the line is indented too far, or a value "
                "containing ': ' lacks quotes", "align the key with its siblings, or quote the value",
                line, column)
    return f"invalid YAML: {problem}", "fix the syntax at this position", line, column


def _syntax_error(filename: str, err: yaml.YAMLError, text: str = "") -> KrcError:
    if isinstance(err, yaml.constructor.ConstructorError):
        mark = err.problem_mark or err.context_mark
        loc = Location(filename, mark.line + 1, mark.column + 1) if mark else Location(filename)
        return KrcError(Problem(f"unsupported YAML: {err.problem or err}", loc,
                                help="krc reads plain data (maps, lists, strings, numbers, booleans, null): "
                                     "remove tags and non-scalar keys"))
    statement, fix, line, column = _plain_words(err, text.splitlines())
    statement = statement if statement.startswith("invalid YAML") else f"invalid YAML: {statement}"
    loc = Location(filename, line + 1, column + 1) if line is not None else Location(filename)
    return KrcError(Problem(statement, loc, help=fix))


def _check_bounds(root: yaml.Node, filename: str) -> None:
    """Refuse documents nested too deep or too big once aliases are expanded (an alias bomb).

    Counted over the composed node graph with one entry per distinct node, so a bomb of nine aliases of nine
    aliases is judged in microseconds instead of being expanded (which is what exhausts memory).
    """
    depth_limit, node_limit = limits.YAML_DEPTH.value, limits.YAML_NODES.value
    sizes: dict[int, int] = {}  # expanded size per distinct node
    # iterative post-order walk: (node, depth, children done?)
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        if id(node) in sizes and not done:
            continue
        if depth > depth_limit:
            raise KrcError(limits.YAML_DEPTH.exceeded("this nesting"),
                           _mark(filename, node))
        children = ([item for pair in node.value for item in pair] if isinstance(node, yaml.MappingNode)
                    else list(node.value) if isinstance(node, yaml.SequenceNode) else [])
        if not done:
            stack.append((node, depth, True))
            # reversed: children are judged in document order, so the place reported is the first too deep in
            # reading order, as yaml_events.first_too_deep finds it
            stack.extend((child, depth + 1, False) for child in reversed(children) if id(child) not in sizes)
            continue
        size = 1 + sum(sizes.get(id(child), 1) for child in children)
        if size > node_limit:
            raise KrcError(limits.YAML_NODES.exceeded("this document"), _mark(filename, node))
        sizes[id(node)] = size


def _composed(text: str, filename: str) -> list[yaml.Node]:
    """Every non-empty document of a stream as a node graph, checked against the bounds (nesting before composing
    anything: a hostile file of deep lists is refused in milliseconds)."""
    too_deep = first_too_deep(text, filename)
    if too_deep is not None:
        raise KrcError(limits.YAML_DEPTH.exceeded("this nesting"), too_deep)
    try:
        nodes = [n for n in yaml.compose_all(text, Loader=SafeLoader) if n is not None]
    except yaml.YAMLError as err:
        raise _syntax_error(filename, err, text) from None
    for node in nodes:
        _check_bounds(node, filename)
    return nodes


def _construct(node: yaml.Node, filename: str) -> Any:
    try:
        return yaml.SafeLoader("").construct_document(node)
    except yaml.YAMLError as err:
        raise _syntax_error(filename, err) from None
    except (ValueError, OverflowError):  # a scalar that reads as a date YAML cannot make (2024-13-45)
        raise _unreadable_scalar(node, filename) from None


def _unreadable_scalar(root: yaml.Node, filename: str) -> KrcError:
    """The first scalar below `root` the safe loader cannot make a value of, as the input error it is."""
    constructor = yaml.SafeLoader("")
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            stack.extend(item for pair in reversed(node.value) for item in reversed(pair))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))
        else:
            try:
                constructor.construct_object(node, deep=True)
            except (ValueError, OverflowError) as err:
                kind = "a date" if node.tag.endswith(":timestamp") else "a number"
                return KrcError(Problem(f"'{node.value}' reads as {kind} YAML cannot make ({err})",
                                        _mark(filename, node),
                                        help=f"quote it if it is text: '{node.value}'"))
            except yaml.YAMLError:
                continue
    return KrcError(Problem("a value YAML cannot make", Location(filename, 1, 1)))


class _Builder:
    """Turns a composed node tree into plain data, recording where each value starts."""

    def __init__(self, filename: str):
        self.filename = filename
        self.positions: Positions = {}
        self._constructor = yaml.SafeLoader("")

    def _scalar(self, node: yaml.Node) -> Any:
        try:
            return self._constructor.construct_object(node, deep=True)
        except yaml.YAMLError as err:
            raise _syntax_error(self.filename, err) from None
        except (ValueError, OverflowError):
            raise _unreadable_scalar(node, self.filename) from None

    def build(self, node: yaml.Node, path: Path) -> Any:
        self.positions[path] = _mark(self.filename, node)
        if isinstance(node, yaml.MappingNode):
            out: dict[str | int | float, Any] = {}  # YAML map keys are any scalar
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise KrcError("YAML merge keys (<<) are not supported; write the keys out",
                                   _mark(self.filename, key_node))
                if not isinstance(key_node, yaml.ScalarNode):
                    raise KrcError("map keys must be scalars", _mark(self.filename, key_node))
                key = self._scalar(key_node)
                if not isinstance(key, (str, int, float, bool)):
                    raise KrcError("map keys must be scalars", _mark(self.filename, key_node))
                if key in out:
                    raise KrcError(f"duplicate key '{key}'; keep one of them", _mark(self.filename, key_node))
                out[key] = self.build(value_node, path + (key,))
                # errors about a map entry point at its key, where the reader looks
                self.positions[path + (key,)] = _mark(self.filename, key_node)
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, path + (i,)) for i, item in enumerate(node.value)]
        return self._scalar(node)


def load_with_positions(text: str, filename: str) -> tuple[Any, Positions]:
    """One YAML document, with the position of every value (by path)."""
    docs = load_all_with_positions(text, filename)
    if len(docs) > 1:
        raise KrcError("expected one YAML document, found several", Location(filename, 1, 1))
    return docs[0] if docs else (None, {Path(): Location(filename, 1, 1)})


def load_all_with_positions(text: str, filename: str) -> list[tuple[Any, Positions]]:
    """Every document of a YAML stream, each with the position of every value (plain data straight from the
    parser's events: yaml_events)."""
    fast = positioned_documents(text, filename)
    if fast is not None:
        return fast
    out = []
    for node in _composed(text, filename):
        builder = _Builder(filename)
        out.append((builder.build(node, ()), builder.positions))
    return out


def load_all(text: str, filename: str = "<string>") -> list[Any]:
    """Every non-empty document of a YAML stream, without positions: plain data straight from the parser's
    events (yaml_events), anything else (anchors, tags, errors, input near the bounds) composed and checked."""
    plain = plain_documents(text)
    if plain is not None:
        return plain
    return [d for d in (_construct(n, filename) for n in _composed(text, filename)) if d is not None]


def load(text: str, filename: str = "<string>", keep: frozenset[str] | None = None) -> Any:
    """The one document of a YAML stream (None when empty); several are an error. Given `keep`, a map document
    holds only those of its keys (the others are read, and must be valid, but are not built)."""
    stream = plain_stream(text, keep)
    if stream is not None and len(stream) <= 1:
        return stream[0] if stream else None
    nodes = _composed(text, filename)
    if len(nodes) > 1:
        raise KrcError("expected one YAML document, found several", Location(filename, 1, 1))
    document = _construct(nodes[0], filename) if nodes else None
    if keep is not None and isinstance(document, dict):
        return {key: value for key, value in document.items() if key in keep}
    return document


class _CanonicalDumper(SafeDumper):  # type: ignore[misc, valid-type]
    """Sorted keys, block style, multi-line strings as literal blocks: stable and readable in review."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_CanonicalDumper.add_representer(str, _represent_str)


DUMP_WIDTH = 1_000_000  # lines are never folded


def dump(data: Any) -> str:
    """The canonical text of one document; identical input gives identical bytes on any machine. Plain data is
    written as text directly (yaml_text), or else as the emitter's events (yaml_emit); anything else through
    PyYAML's dumper, with the same result."""
    text = yaml_text.plain_text(data, DUMP_WIDTH)
    if text is None:
        text = yaml_emit.plain_text(data, DUMP_WIDTH)
    if text is not None:
        return text
    return yaml.dump(data, Dumper=_CanonicalDumper, sort_keys=True, default_flow_style=False,
                     allow_unicode=True, width=DUMP_WIDTH, explicit_start=False)


def dump_all(documents: list[Any]) -> str:
    return "".join("---\n" + dump(doc) for doc in documents)


def iter_paths(data: Any, prefix: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every (path, leaf value) in a nested structure, depth first."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield from iter_paths(value, prefix + (key,))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from iter_paths(value, prefix + (i,))
    else:
        yield prefix, data
