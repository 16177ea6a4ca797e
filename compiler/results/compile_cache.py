"""The compile cache: each environment's compiled result, content-addressed, in krc's cache dir.

An entry holds what `krc render` would write for one environment (its golden-layout files: not when `krc lint` or
`krc policy` compiled it, which write no files; the first command that needs them makes them from the objects and
keeps them), its rendered objects and Helm values, and its findings. It is found under a key made of everything the
result depends on:

  krc's own code                 (its version and a digest of the compiler package: a changed rule is a new key)
  templates/                     (every file's path and bytes)
  vendor/                        (the lock and every chart archive's bytes: the chart digests)
  the command's options          (e.g. lint --argocd-crds, with the CRDs' bytes)
  the environment's own file     (its name and bytes)

and holds, verified on every read, the digests of the other layers it extends (base.yaml...) and of any other file
its findings read (the Argo CD CRDs it names): each layer's bytes decide its parent, so checking the recorded chain
file by file checks the whole chain. A small summary of each entry (chart, object count, findings, file digests)
is kept beside it, for commands whose output is already right. Policy results are kept under their own key
(`policy_key`); results derived from an entry also key on its `inputs_digest` (its key names only its own file).
Entries are the store's (cache/store.py): one that is not verified, or whose recorded inputs changed, is ignored
(never believed) and replaced; writes are atomic and best effort: a read-only cache only costs speed.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..cache import CacheKind, cache_dir, cache_key
from ..cache.digests import krc_fingerprint, limit_settings, tree_digest
from ..diagnostics.problems import (
    KrcError,
    Problem,
    location_from_json,
    location_to_json,
    problem_from_json,
    problem_to_json,
)
from ..k8s.objects import RenderedObject
from ..native.binary import builds_identity
from ..project.paths import Project
from .compiled_records import Compiled, Summary, entry_facts, file_digests
from .input_digests import InputDigests
from .summary_index import SummaryIndex

T = TypeVar("T")

# bump a kind's version when what its entries hold or what their keys cover changes
COMPILED = CacheKind("compiled", 3)
SUMMARIES = CacheKind("summaries", 3)
POLICIES = CacheKind("policy", 2)


class CompileCache:
    """Entries of one project, under `folder` (default: krc's cache dir). Disabled, it finds nothing and keeps
    nothing (`--no-cache`)."""

    def __init__(self, project: Project, enabled: bool = True, options: str = "", folder: Path | None = None,
                 shared: str | None = None, peers: Mapping[str, str] | None = None, summary_index: bool = False):
        """`shared`: the digest of what every key covers, as another CompileCache of the same run computed it
        (worker processes take the main process's, so one run uses one view of templates/ and vendor/);
        `peers`: per environment, the digest of what its findings read of the other environments' destinations
        (k8s.destinations.peer_digests), which joins its key alone; `summary_index`: summaries are read from, and
        kept in, the project's index too (the command's own process: summary_index)."""
        self.project = project
        self.enabled = enabled
        self.folder = folder or cache_dir()
        self._root_text = str(project.root)
        self._environment_files: dict[str, str] = {}
        self._files = InputDigests(str(project.resolved_root), enabled, self.folder)
        self._summaries: dict[str, Summary] = {}
        self._keys: dict[str, str] = {}
        self._entries_seen: set[str] = set()  # keys whose entry has_entry found (entries are replaced, not removed)
        if shared is None and enabled:
            shared = cache_key(krc_fingerprint(str(self.folder)), tree_digest(project.templates_dir),
                               tree_digest(project.vendor_dir), options, limit_settings(), builds_identity())
        self.shared = shared or ""
        self.peers: Mapping[str, str] = peers or {}
        # the command's own process reads every environment's summary from one entry (workers: their own entries)
        self._index = SummaryIndex(str(project.resolved_root), self.shared, self.folder) \
            if summary_index and enabled else None

    def digest(self, path: Path | str) -> str:
        """Digest of a file, worked out once per run (base.yaml is every environment's layer): by path as text,
        as hashing Path objects costs more than the lookups."""
        return self._files.digest(os.fspath(path))

    def edited_environments(self, names: Iterable[str]) -> list[str]:
        """Of `names`, the environments whose file is new or holds other bytes than when a command last hashed it
        (InputDigests.edited), so most likely to compile; none without the cache."""
        files = {}
        for name in names:
            try:
                files[self._environment_file(name)] = name
            except KrcError:
                continue  # a name no environment file can have: reported where it is used
        return [files[path] for path in self._files.edited_among(files)]

    def remember_digests(self) -> None:
        """Keep the digests of the files read anew in the project's memo (input_digests), for the next command,
        with this cache's shared digest (krc, templates/, vendor/, options, bounds)."""
        self._files.save(self.shared)

    def shares_last_basis(self) -> bool:
        """Whether the last command that kept the memo had this cache's shared digest: otherwise every
        environment compiles, however few files were edited (a template changed, krc was upgraded)."""
        return bool(self.shared) and self._files.basis == self.shared

    def environment_digest(self, name: str) -> str:
        """The digest of environments/<name>.yaml, the environment's own layer."""
        return self.digest(self._environment_file(name))

    def _environment_file(self, name: str) -> str:
        file = self._environment_files.get(name)
        if file is None:
            file = self._environment_files[name] = str(self.project.environment_file(name))
        return file

    def share_digests(self, other: CompileCache) -> None:
        # the files `other` read in this run: read once per command
        self._files = other._files
        self._keys.clear()

    def key(self, name: str) -> str:
        """The environment's key, worked out once: a warm command asks it several times per environment."""
        found = self._keys.get(name)
        if found is None:
            found = self._keys[name] = cache_key(self.shared, name, self.environment_digest(name),
                                                 self.peers.get(name, ""))
        return found

    # ---- entries: the store's (cache.store), verified on every read -------------------------------------------

    def read_payload(self, kind: CacheKind, key: str) -> Any | None:
        """The payload stored under `key`, or None when absent or not trustworthy."""
        return kind.read_json(key, self.folder) if self.enabled else None

    def write_payload(self, kind: CacheKind, key: str, payload: Any) -> None:
        if self.enabled:
            kind.write_json(key, payload, self.folder)

    # ---- compiled environments ---------------------------------------------------------------------------------

    def inputs_unchanged(self, recorded: Any) -> bool:
        if not isinstance(recorded, list):
            return False
        for entry in recorded:
            relative, digest = entry
            parts = str(relative).split("/")
            if relative.startswith("/") or ".." in parts:  # entries name files inside the project only
                return False
            if self.digest(os.path.join(self._root_text, relative)) != digest:
                return False
        return True

    def _current(self, kind: CacheKind, name: str, read: Callable[[str, Any], T | None],
                 indexed: SummaryIndex | None = None) -> T | None:
        """`read(key, payload)` of the environment's payload of `kind` under its current key, when it names the
        environment and its recorded inputs kept their bytes; None when anything in it is not as written.
        `indexed`: the index that may hold the payload instead of its own entry (summary_index)."""
        key = self.key(name)
        payload = indexed.payload(key) if indexed is not None else None
        if payload is None:
            payload = self.read_payload(kind, key)
        try:
            if payload is None or payload["name"] != name or not self.inputs_unchanged(payload["inputs"]):
                return None
            found = read(key, payload)
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        if indexed is not None and found is not None:
            indexed.learned(key, payload)
        return found

    def lookup(self, name: str) -> Compiled | None:
        def read(key: str, payload: Any) -> Compiled | None:
            chart, findings, inputs, crds = entry_facts(payload)
            objects, chart_objects = (
                tuple(RenderedObject(o["document"], str(o["template"]), location_from_json(o["location"]))
                      for o in payload[field]) for field in ("objects", "chartObjects"))
            if not all(isinstance(o.document, dict) for o in objects + chart_objects) \
                    or not isinstance(payload["helmValues"], dict):
                return None
            kept = payload.get("files")  # absent when a command that needed no files compiled it (lint)
            files = None if kept is None else {str(path): text.encode("utf-8") for path, text in kept.items()}
            return Compiled(name, key, chart, files, objects, payload["helmValues"], findings, chart_objects,
                            from_cache=True, inputs_digest=inputs, crds=crds,
                            recorded=tuple((str(path), str(digest)) for path, digest in payload["inputs"]))

        return self._current(COMPILED, name, read)

    def summary(self, name: str) -> Summary | None:
        """Its current entry's trustworthy summary, kept once found (until stored; a worker may store it later)."""
        found = self._summaries.get(name) or self._read_summary(name)
        return self._summaries.setdefault(name, found) if found else None

    def _read_summary(self, name: str) -> Summary | None:
        def read(key: str, payload: Any) -> Summary | None:
            chart, findings, inputs, crds = entry_facts(payload)
            digests, objects = payload["files"], payload["objects"]
            if digests is not None and (not isinstance(digests, dict)
                                        or not all(isinstance(v, str) for v in digests.values())) \
                    or not isinstance(objects, int):
                return None
            return Summary(name, key, chart, objects, findings, digests, inputs,
                           tuple(str(path) for path, _ in payload["inputs"]), crds)

        return self._current(SUMMARIES, name, read, self._index)

    def save_summary_index(self, names: Sequence[str]) -> None:
        """Keep the summaries this command learned of `names` in the project's index (summary_index), for the
        next command's process: under the keys the command worked out (a name whose key it never needed, one
        whose file could not be read, has nothing learned)."""
        if self._index is not None:
            current = {name: self._keys[name] for name in names if name in self._keys}
            self._index.save(current, frozenset(self.project.environment_names()))

    def recorded_inputs(self, inputs: Iterable[Path]) -> tuple[tuple[str, str], ...]:
        """(path, sha256) of each file, sorted: the path relative to the project, absolute when outside it."""
        root = self.project.resolved_root
        recorded = []
        for path in set(inputs):
            resolved = path.resolve()
            shown = resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else str(resolved)
            recorded.append((shown, self.digest(resolved)))
        return tuple(sorted(recorded))

    def store(self, compiled: Compiled) -> None:
        """Keep `compiled`, valid while its recorded inputs (its layers, files its findings read) keep their
        bytes. A result that read a file outside the project is not kept."""
        self._summaries.pop(compiled.name, None)
        if not self.enabled or any(path.startswith("/") for path, _ in compiled.recorded):
            return
        recorded = [list(pair) for pair in compiled.recorded]  # lists: JSON reads them back as it wrote them
        try:
            files = None if compiled.files is None else \
                {path: content.decode("utf-8") for path, content in compiled.files.items()}
        except UnicodeDecodeError:
            return
        summary = {
            "name": compiled.name, "chart": list(compiled.chart), "inputs": recorded, "objects": compiled.object_count,
            "findings": [problem_to_json(p) for p in compiled.findings],
            "files": None if compiled.files is None else file_digests(compiled.files), "crds": compiled.crds}
        self.write_payload(SUMMARIES, compiled.key, summary)
        if self._index is not None:
            self._index.learned(compiled.key, summary)
        self.write_payload(COMPILED, compiled.key, {
            "name": compiled.name, "chart": list(compiled.chart), "inputs": recorded,
            **({} if files is None else {"files": files}), "crds": compiled.crds,
            "helmValues": compiled.helm_values,
            **{field: [{"document": o.document, "template": o.template, "location": location_to_json(o.location)}
                       for o in objects]
               for field, objects in (("objects", compiled.objects), ("chartObjects", compiled.chart_objects))},
            "findings": [problem_to_json(p) for p in compiled.findings]})

    # ---- lists of findings: policy results (policy_key), and results derived like lint's ----------------------

    def policy_key(self, compile_key: str, inputs: str, policies: Sequence[Path], engine: str) -> str:
        """Policy findings depend on the compiled result (key, inputs_digest), the policy files and the engine."""
        return cache_key(compile_key, inputs, engine, *(f"{p.name}:{self.digest(p)}" for p in policies))

    def findings(self, kind: CacheKind, key: str) -> list[Problem] | None:
        """A list of findings kept under `kind` (POLICIES, or a derived result such as lint's), when trustworthy."""
        payload = self.read_payload(kind, key)
        if not isinstance(payload, list):
            return None
        try:
            return [problem_from_json(p) for p in payload]
        except (KeyError, TypeError, ValueError, AttributeError):
            return None

    def store_findings(self, kind: CacheKind, key: str, findings: Sequence[Problem]) -> None:
        self.write_payload(kind, key, [problem_to_json(p) for p in findings])

    # ---- cheap questions, for deciding what is worth a worker process --------------------------------------------

    def has_entry(self, name: str) -> bool:
        """Whether a current entry exists: its key's, with its layers' bytes unchanged (after a change to
        base.yaml, what extends it has work to do, in batches and workers like any other)."""
        if self.summary(name) is None:
            return False
        key = self.key(name)
        if key not in self._entries_seen and COMPILED.exists(key, self.folder):
            self._entries_seen.add(key)
        return key in self._entries_seen

    def has_payload(self, kind: CacheKind, key: str) -> bool:
        return self.enabled and kind.exists(key, self.folder)
