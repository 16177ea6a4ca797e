"""Problems are values: every stage collects them and a formatter reports them at the edge."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from . import fieldpath

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}
_NAMED_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escaped_char(char: str) -> str:
    code = ord(char)
    named = _NAMED_ESCAPES.get(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, as Python decodes file names and the environment
        return f"\\x{code - 0xDC00:02x}"
    return named or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")


def safe_text(text: str, lines: bool = False) -> str:
    """`text` with every character a terminal or a reader could take for something else written as an escape:
    control characters (ESC sequences that recolour, retitle or clear a terminal; a newline that forges a line),
    bidirectional overrides and other invisible format characters, lone surrogates. Printable text is returned
    as it is, and escaping twice changes nothing (a backslash is printable). `lines`: a report's own newlines, and
    tabs (a CUE file's indentation), are kept; each line is judged alone, at C speed when it is printable, as
    almost every line is."""
    if lines:
        return "\n".join(line if line.isprintable() else _escaped(line, "\t") for line in text.split("\n"))
    return text if text.isprintable() else _escaped(text, "")


def _escaped(text: str, keep: str) -> str:
    return "".join(c if c.isprintable() or c in keep else _escaped_char(c) for c in text)


def _json_escaped(char: str) -> str:
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def safe_json(text: str) -> str:
    """JSON text (json.dumps with ensure_ascii=False) whose characters a terminal acts on or a reader cannot see
    (DEL, the C1 controls, bidirectional overrides, lone surrogates) are \\u escapes, as JSON already writes the
    C0 controls: the same data, safe to `cat`, and always encodable as UTF-8. Outside strings JSON text is
    printable ASCII and newlines, so only strings change."""
    return "\n".join(line if line.isprintable() else "".join(c if c.isprintable() else _json_escaped(c) for c in line)
                     for line in text.split("\n"))


@dataclass(frozen=True, order=True)
class Location:
    """A place in a file; line and column are 1-based, 0 means unknown."""

    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if not self.line:
            return self.file
        return f"{self.file}:{self.line}:{self.column or 1}"


@dataclass(frozen=True)
class Problem:
    """One finding: an input error, a schema violation or a lint result."""

    message: str
    location: Location | None = None
    severity: Severity = "error"
    rule: str = ""
    # kind/namespace/name of the object concerned, when there is one
    object: str = ""
    # the field inside that object (or the environment), as data: keys and list indexes
    segments: tuple[str | int, ...] = ()

    @property
    def path(self) -> str:
        """The field in krc's one path notation (fieldpath.render), made only where it is shown."""
        return fieldpath.render(self.segments)
    # the fix, in the environment file's terms ('write memory: 32Gi'); older messages carry it after '; '
    help: str = ""

    def one_line(self) -> str:
        """`file:line:col: severity: message; help [rule]`: the form editors and CI annotations parse."""
        where = str(self.location) if self.location else (self.object or "krc")
        rule = f" [{self.rule}]" if self.rule else ""
        fix = f"; {self.help}" if self.help else ""
        return safe_text(f"{where}: {self.severity}: {self.message}{fix}{rule}")

    def sort_key(self) -> tuple[Any, ...]:
        loc = self.location or Location("")
        return (loc.file, loc.line, loc.column, SEVERITY_ORDER[self.severity], self.rule, self.message)


class KrcError(Exception):
    """Bad input: the CLI reports each problem on one line and exits 2, having written nothing."""

    def __init__(self, problems: Iterable[Problem] | Problem | str, location: Location | None = None):
        if isinstance(problems, str):
            problems = [Problem(problems, location)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__("\n".join(p.one_line() for p in self.problems))


def has_errors(problems: Iterable[Problem]) -> bool:
    return any(p.severity == "error" for p in problems)


def errors_among(problems: Iterable[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "error"]


def sorted_problems(problems: Iterable[Problem]) -> list[Problem]:
    return sorted(problems, key=Problem.sort_key)


# ---- as JSON data, for krc's cache (its entries are JSON, never pickle) ------------------------------------------

def location_to_json(location: Location | None) -> list[Any] | None:
    return None if location is None else [location.file, location.line, location.column]


def location_from_json(value: Any) -> Location | None:
    if value is None:
        return None
    file, line, column = value
    if not (isinstance(file, str) and isinstance(line, int) and isinstance(column, int)):
        raise ValueError("bad location")
    return Location(file, line, column)


def problem_to_json(problem: Problem) -> dict[str, Any]:
    return {"message": problem.message, "location": location_to_json(problem.location), "severity": problem.severity,
            "rule": problem.rule, "object": problem.object, "segments": list(problem.segments), "help": problem.help}


def problem_from_json(value: dict[str, Any]) -> Problem:
    severity = value["severity"]
    if severity not in ("error", "warning", "info"):
        raise ValueError("bad severity")
    fields = [value[k] for k in ("message", "rule", "object", "help")]
    segments = value["segments"]
    if not all(isinstance(f, str) for f in fields) or not isinstance(segments, list) \
            or not all(isinstance(s, (str, int)) and not isinstance(s, bool) for s in segments):
        raise ValueError("bad problem")
    return Problem(fields[0], location_from_json(value["location"]), severity, fields[1], fields[2], tuple(segments),
                   fields[3])
