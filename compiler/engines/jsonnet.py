"""Jsonnet templates (`*.jsonnet`), evaluated by the official Go implementation; imports stay inside templates/.

The `gojsonnet` package is the Jsonnet project's own Python binding of go-jsonnet, API-compatible with the
C++ `jsonnet` binding. The C++ binding re-parses the standard library for every file and external variable
(about 25 ms each here), which alone would exceed the render budget; see README "Dependencies".

Context values arrive as JSON text decoded by `std.parseJson` (`std.extVar('env')` gives the value). Templates
also get `std.native('yaml')`, which turns a JSON string into canonical YAML text (for fields such as
serveConfigV2 that hold YAML): the same dump as every written file, and much faster than std.manifestYamlDoc in
the C++ interpreter; and `std.native('merge')`, krc's one merge (environment/layering.py), so `raw:` and layers
follow the same rules.
"""
from __future__ import annotations

import json
import os
import re
import resource
import stat
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _gojsonnet as _jsonnet

from .. import jsontext
from ..diagnostics.problems import KrcError, Location
from ..documents import yamlio
from ..environment.layering import merge_values
from ..project.paths import read_resolved
from ..settings import limits

# A place in a Jsonnet error message: "path/to/file.jsonnet:12:5-20" or "file.jsonnet:(12:5)-(14:2)"
_FRAME = re.compile(r"(?P<file>[^\s:]+\.(?:jsonnet|libsonnet)):\(?(?P<line>\d+):(?P<col>\d+)\)?"
                    r"(?:-\(?\d+(?::\d+)?\)?)?")
_BATCH_NAME = "_krc_batch.jsonnet"
# A batch evaluates each template once per environment inside one Jsonnet run: the template's text, unchanged and
# on its own lines, becomes the body of a function of the environment's context, in which `std.extVar` reads that
# context (and `std.thisFile` names the template). Libraries are parsed once for the whole batch.
_BATCH_SCHEME = "#krc-batch:"
_BATCH_PREFIX = ("function(krc_context) local krc_std = std; local std = krc_std + "
                 "{{ extVar(name):: krc_context[name], thisFile:: {this_file} }}; ")


# What imports found, by (templates folder, importing folder, import): the file, its bytes and its identity when
# read. go-jsonnet keeps imports for one run only, and a command runs it twice per batch of environments; an import
# read before is believed while the file found keeps its identity (a regular file, not a link, of the same device,
# inode, size, modification and change times), so a file changed or replaced during the command is read and
# confined again. At most _FOUND_LIMIT imports are kept (a process that renders project after project).
_FOUND: dict[tuple[Path, str, str], tuple[str, bytes, tuple[int, ...]]] = {}
_FOUND_LIMIT = 512


def _identity(path: str) -> tuple[int, ...] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns, info.st_ctime_ns


class _Importer:
    """Imports from templates/ only. A refused import must fail the render: the refusal is recorded here and
    raised after evaluation, whatever the template did with the text (an `importstr` would otherwise turn the
    refusal message into a value)."""

    def __init__(self, templates_dir: Path):
        self.root = templates_dir.resolve()
        self.refused: list[tuple[str, str]] = []  # (reason, folder of the importing file)
        self.base = ""

    def refuse(self, candidate: Path, reason: str) -> tuple[str, bytes]:
        self.refused.append((reason, self.base))
        # An exception raised here loses its text inside the Go binding; a Jsonnet error keeps it and the
        # location of the import.
        return str(candidate), f"error {json.dumps(reason)}".encode()

    def __call__(self, base: str, relative: str) -> tuple[str, bytes]:
        if relative.startswith(_BATCH_SCHEME):  # a template of a batch (JsonnetEngine.render_many), as a function
            found, content = self(str(self.root), relative.removeprefix(_BATCH_SCHEME))  # confined as any import
            if self.refused:
                return found, content
            prefix = _BATCH_PREFIX.format(this_file=json.dumps(found))
            return found + _BATCH_SCHEME, prefix.encode() + content
        self.base = base
        known = _FOUND.get((self.root, base, relative))
        if known is not None and _identity(known[0]) == known[2]:
            return known[0], known[1]
        candidate = Path(base) / relative
        resolved = candidate.resolve()
        if not resolved.is_relative_to(self.root):
            return self.refuse(candidate, f"import '{relative}' leaves templates/; keep libraries under templates/")
        if not resolved.exists():
            return self.refuse(candidate, f"import '{relative}' not found under templates/")
        identity = _identity(str(resolved))
        try:
            shown = "templates/" + resolved.relative_to(self.root).as_posix()
            content = read_resolved(resolved, self.root, limits.TEMPLATE_FILE_BYTES, shown)
        except KrcError as err:
            return self.refuse(candidate, f"import '{relative}': {err.problems[0].message}")
        if identity is not None and identity == _identity(str(resolved)):  # unchanged while it was read
            if len(_FOUND) >= _FOUND_LIMIT:
                _FOUND.clear()
            _FOUND[(self.root, base, relative)] = (str(resolved), content, identity)
        return str(resolved), content


def _yaml_native(json_text: str) -> str:
    return yamlio.dump(json.loads(json_text))


def _merge_native(base_json: str, over_json: str) -> Any:
    # go-jsonnet passes only primitives to native callbacks, so both sides arrive as JSON text
    return merge_values(json.loads(base_json), json.loads(over_json))


# `merge` is krc's layering merge (environment/layering.py): `raw:` follows exactly the rules of layers.
NATIVE_CALLBACKS = {"yaml": (("json",), _yaml_native), "merge": (("base", "over"), _merge_native)}


def _error(message: str, project_root: Path) -> KrcError:
    first = message.splitlines()[0].replace("RUNTIME ERROR: ", "").replace("STATIC ERROR: ", "").strip()
    location = None
    for match in _FRAME.finditer(message):
        if match["file"].endswith(_BATCH_NAME):
            continue
        try:
            shown = Path(match["file"]).resolve().relative_to(project_root.resolve()).as_posix()
        except ValueError:
            shown = match["file"]
        location = Location(shown, int(match["line"]), int(match["col"]))
        break
    first = _FRAME.sub("", first).lstrip(": ").strip() or first
    return KrcError(f"{first}; fix the template or the environment value it reads", location)


_WATCH_SECONDS = 0.02
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class _BoundExceeded(KrcError):
    """Time or memory ran out: the same for a batch as for each of its contexts, so never tried again."""


def _resident_bytes() -> int:
    """This process's resident memory now (Linux), else its peak so far (getrusage; kilobytes on Linux, bytes on
    macOS): either grows with what the evaluation allocates."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_BYTES
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def _named(templates: list[Path], project_root: Path) -> tuple[str, str]:
    """The templates of one evaluation as a message names them, and the location to give: the
    one template, or its folder when there are several (a Jsonnet run cannot tell which one allocated)."""
    def relative(path: Path) -> str:
        try:
            return path.resolve().relative_to(project_root.resolve()).as_posix()
        except ValueError:
            return path.as_posix()

    shown = [relative(t) for t in templates]
    if len(shown) == 1:
        return f"the Jsonnet template {shown[0]}", shown[0]
    listed = ", ".join(shown[:6]) + (f" and {len(shown) - 6} more" if len(shown) > 6 else "")
    return f"the Jsonnet templates ({listed})", relative(templates[0].parent) + "/"


def _evaluate_within_deadline(filename: str, snippet: str, importer: _Importer, *,
                              ext_codes: dict[str, str] | None = None, ext_vars: dict[str, str] | None = None,
                              named: Callable[[], tuple[str, str]] = lambda: ("the Jsonnet templates",
                                                                              "templates/")) -> str:
    """Evaluate in a worker thread (go-jsonnet releases the GIL) and give up at KRC_TEMPLATE_SECONDS or when krc
    has grown by KRC_JSONNET_MEMORY_MB meanwhile: the stack is bounded, loops and allocations are not, and
    go-jsonnet offers no bound on either. An abandoned evaluation runs on until it ends or krc exits (a daemon
    thread). `named` is asked only when a bound is exceeded: resolving every template's path for every batch was
    a few percent of a run."""
    outcome: list[tuple[bool, Any]] = []

    def evaluate() -> None:
        try:
            outcome.append((True, _jsonnet.evaluate_snippet(filename, snippet, ext_codes=ext_codes or {},
                                                            ext_vars=ext_vars or {},
                                                            import_callback=importer,
                                                            native_callbacks=NATIVE_CALLBACKS,
                                                            max_stack=limits.JSONNET_STACK.value)))
        except BaseException as err:  # handed to the calling thread
            outcome.append((False, err))

    worker = threading.Thread(target=evaluate, daemon=True, name="krc-jsonnet")
    deadline = time.monotonic() + limits.JINJA_SECONDS.value
    memory_bound = limits.JSONNET_MEMORY_MB.value << 20
    before = _resident_bytes()
    worker.start()
    # joined in slices, each ending as soon as the evaluation does, so its memory is watched meanwhile
    while worker.is_alive() and time.monotonic() < deadline:
        worker.join(min(_WATCH_SECONDS, max(0.0, deadline - time.monotonic())))
        if not outcome and _resident_bytes() - before > memory_bound:
            shown, where = named()
            raise _BoundExceeded(limits.JSONNET_MEMORY_MB.exceeded(f"evaluating {shown}"), Location(where))
    if not outcome:
        shown, where = named()
        raise _BoundExceeded(limits.JINJA_SECONDS.exceeded(f"evaluating {shown}"), Location(where))
    succeeded, value = outcome[0]
    if not succeeded:
        raise value
    return str(value)


# Each context value arrives as JSON text, an external string named krc<i>_<key> (i: the context's place in a
# batch), read by std.parseJson: go-jsonnet's JSON decoder is faster than its Jsonnet parser over the same text as
# external code.
def _context_strings(contexts: list[dict[str, Any]]) -> dict[str, str]:
    return {f"krc{i}_{key}": jsontext.canonical(value)
            for i, context in enumerate(contexts) for key, value in context.items()}


def _decoded(index: int, key: str) -> str:
    """The Jsonnet expression giving context `index`'s value of `key` (see _context_strings)."""
    return f"std.parseJson(std.extVar({json.dumps(f'krc{index}_{key}')}))"


def _batch_snippet(keys: list[str], count: int, context_keys: list[str]) -> str:
    templates = ",\n".join(f"  {json.dumps(k)}: import {json.dumps(_BATCH_SCHEME + k)}" for k in keys)
    contexts = ",\n".join("  {" + ", ".join(f"{json.dumps(k)}: {_decoded(i, k)}" for k in context_keys) + "}"
                           for i in range(count))
    return (f"local templates = {{\n{templates}\n}};\nlocal contexts = [\n{contexts}\n];\n"
            "[{ [key]: templates[key](context) for key in std.objectFields(templates) } for context in contexts]\n")


class JsonnetEngine:
    def render_many(self, templates: list[Path], templates_dir: Path, contexts: list[dict[str, Any]],
                    project_root: Path) -> list[list[list[Any]]] | None:
        """`render` of the same templates for many contexts in one Jsonnet run (the templates and libraries are
        parsed once instead of once per context), or None when the batch did not evaluate cleanly: the caller
        then renders each context on its own, so every error is the one that context's own run reports."""
        if not templates or not contexts:
            return [[] for _ in contexts] if contexts else []
        root = templates_dir.resolve()
        keys = [t.resolve().relative_to(root).as_posix() for t in templates]
        context_keys = sorted(contexts[0])
        if any(sorted(context) != context_keys for context in contexts):
            return None
        importer = _Importer(root)
        try:
            text = _evaluate_within_deadline(str(root / _BATCH_NAME), _batch_snippet(keys, len(contexts), context_keys),
                                             importer, ext_vars=_context_strings(contexts),
                                             named=lambda: _named(templates, project_root))
        except _BoundExceeded:
            raise
        except (RuntimeError, KrcError):
            return None
        if importer.refused:
            return None
        results = jsontext.loads(text)
        return [[r if isinstance(r, list) else [r] for r in (result[k] for k in keys)] for result in results]

    def render(self, templates: list[Path], templates_dir: Path, context: dict[str, Any],
               project_root: Path) -> list[list[Any]]:
        root = templates_dir.resolve()
        # One VM for the whole batch: each template is one field of a generated object, imported by path.
        keys = [t.resolve().relative_to(root).as_posix() for t in templates]
        snippet = "{\n" + ",\n".join(f"  {json.dumps(k)}: import {json.dumps(k)}" for k in keys) + "\n}\n"
        # the context decoded as a batch's is (_context_strings), under external code of each key's own name, so
        # std.extVar('env') gives the value
        ext_codes = {key: _decoded(0, key) for key in context}
        importer = _Importer(root)
        try:
            text = _evaluate_within_deadline(str(root / _BATCH_NAME), snippet, importer, ext_codes=ext_codes,
                                             ext_vars=_context_strings([context]),
                                             named=lambda: _named(templates, project_root))
        except RuntimeError as err:
            error = _error(str(err), project_root)
            if "max stack frames exceeded" in str(err):
                raise KrcError(limits.JSONNET_STACK.exceeded("the template's recursion"),
                               error.problems[0].location) from None
            raise error from None
        if importer.refused:
            reason, base = importer.refused[0]
            try:
                where = Location(Path(base).resolve().relative_to(project_root.resolve()).as_posix() + "/")
            except ValueError:
                where = None
            raise KrcError(f"{reason} (in a template in this folder); a refused import is an error, never content",
                           where)
        results = jsontext.loads(text)
        return [r if isinstance(r, list) else [r] for r in (results[k] for k in keys)]
