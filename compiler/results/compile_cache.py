"""The compile cache: each environment's compiled result, content-addressed, in krc's cache dir.

An entry holds what `krc render` would write for one environment (its golden-layout files), its rendered objects
and Helm values, and its findings. It is found under a key made of everything the result depends on:

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

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ..cache import CacheKind, cache_dir, cache_key
from ..cache.digests import krc_fingerprint, limit_settings, sha256_hex, tree_digest
from ..diagnostics.problems import (
    KrcError,
    Problem,
    location_from_json,
    location_to_json,
    problem_from_json,
    problem_to_json,
)
from ..k8s.objects import RenderedObject
from ..native import kuberay
from ..project.paths import Project
from .input_digests import InputDigests

T = TypeVar("T")

# bump a kind's version when what its entries hold or what their keys cover changes
COMPILED = CacheKind("compiled", 3)
SUMMARIES = CacheKind("summaries", 3)
POLICIES = CacheKind("policy", 2)


@dataclass(frozen=True)
class Compiled:
    """One environment's compiled result, as the commands need it: the same from a compile or from the cache."""

    name: str
    key: str  # the cache key it is (or would be) stored under
    chart: tuple[str, str]  # chart name and version
    files: dict[str, bytes]  # golden layout (no crds/): what `krc golden` writes and `krc check` compares
    objects: tuple[RenderedObject, ...]
    helm_values: dict[str, Any]
    findings: tuple[Problem, ...]
    chart_objects: tuple[RenderedObject, ...] = ()  # what Helm renders of the pinned chart (Render.chart_objects)
    from_cache: bool = False
    # every file it was compiled from besides templates/ and vendor/ (its layers, the Argo CD CRDs it names): the
    # key names only its own file, so what derives from it (policies, lint, reviews) keys on this too
    inputs_digest: str = ""
    crds: int = 0  # the pinned chart's CRDs (what render and golden report, without reading the chart)

    @property
    def result_key(self) -> str:
        return result_key(self.key, self.inputs_digest)

    @property
    def object_count(self) -> int:
        """The objects it deploys, the chart's included (CRDs apart): what every command counts."""
        return len(self.objects) + len(self.chart_objects)


@dataclass(frozen=True)
class Summary:
    """What a command whose output is already right needs of a compiled environment, kept beside the full entry
    (a few hundred bytes instead of every object): render, check, golden, diff and lint of unchanged ones."""

    name: str
    key: str
    chart: tuple[str, str]
    objects: int
    findings: tuple[Problem, ...]
    file_digests: dict[str, str]  # golden-layout path -> sha256 of its bytes
    inputs_digest: str  # as Compiled.inputs_digest
    input_files: tuple[str, ...] = ()  # the files it was compiled from, as recorded (relative to the project)
    crds: int = 0  # as Compiled.crds

    @property
    def result_key(self) -> str:
        return result_key(self.key, self.inputs_digest)


def result_key(key: str, inputs: str) -> str:
    """Which result an output folder holds: the entry's key with every input it recorded (base.yaml too)."""
    return cache_key(key, inputs)


def inputs_digest(recorded: Any) -> str:
    """The digest of recorded inputs ([path, sha256] pairs), the same however they were listed."""
    return sha256_hex(json.dumps(sorted(recorded), separators=(",", ":")).encode())


def findings_digest(findings: Iterable[Problem]) -> str:
    return sha256_hex(json.dumps([problem_to_json(p) for p in findings], sort_keys=True).encode())


def _entry_facts(payload: Any) -> tuple[tuple[str, str], tuple[Problem, ...], str, int]:
    """What a full entry and its summary both hold: the chart, the findings, the inputs' digest, the CRD count."""
    chart_name, chart_version = payload["chart"]
    findings = tuple(problem_from_json(p) for p in payload["findings"])
    crds = payload["crds"]
    if not isinstance(crds, int):
        raise TypeError("crds")
    return (str(chart_name), str(chart_version)), findings, inputs_digest(payload["inputs"]), crds


def file_digests(files: dict[str, bytes]) -> dict[str, str]:
    return {path: sha256_hex(content) for path, content in sorted(files.items())}


class CompileCache:
    """Entries of one project, under `folder` (default: krc's cache dir). Disabled, it finds nothing and keeps
    nothing (`--no-cache`)."""

    def __init__(self, project: Project, enabled: bool = True, options: str = "", folder: Path | None = None,
                 shared: str | None = None, peers: Mapping[str, str] | None = None):
        """`shared`: the digest of what every key covers, as another CompileCache of the same run computed it
        (worker processes take the main process's, so one run uses one view of templates/ and vendor/);
        `peers`: per environment, the digest of what its findings read of the other environments' destinations
        (k8s.destinations.peer_digests), which joins its key alone."""
        self.project = project
        self.enabled = enabled
        self.folder = folder or cache_dir()
        # per run (files do not change under one command), by path as text: hundreds of environments' layers are
        # looked up several times each, and hashing Path objects costs more than the lookups
        self._digests: dict[str, str] = {}
        self._root_text = str(project.root)
        self._environment_files: dict[str, str] = {}
        self._files = InputDigests(str(project.resolved_root), enabled, self.folder)
        self._summaries: dict[str, Summary] = {}
        self._keys: dict[str, str] = {}
        self._entries_seen: set[str] = set()  # keys whose entry has_entry found (entries are replaced, not removed)
        if shared is None and enabled:
            shared = cache_key(krc_fingerprint(), tree_digest(project.templates_dir), tree_digest(project.vendor_dir),
                               options, limit_settings(), kuberay.builds_identity())
        self.shared = shared or ""
        self.peers: Mapping[str, str] = peers or {}

    def digest(self, path: Path | str) -> str:
        """Digest of a file read once per cache object (base.yaml is every environment's layer)."""
        text = os.fspath(path)
        found = self._digests.get(text)
        if found is None:
            found = self._digests[text] = self._files.digest(text)
        return found

    def edited_environments(self, names: Iterable[str]) -> list[str]:
        """Of `names`, the environments whose file is new or holds other bytes than when a command last hashed it
        (InputDigests.edited), so most likely to compile; none without the cache."""
        edited = []
        for name in names:
            try:
                self.environment_digest(name)
            except KrcError:
                continue  # a name no environment file can have: reported where it is used
            if self._files.edited(self._environment_files[name]):
                edited.append(name)
        return edited

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
        file = self._environment_files.get(name)
        if file is None:
            file = self._environment_files[name] = str(self.project.environment_file(name))
        return self.digest(file)

    def share_digests(self, other: CompileCache) -> None:
        # the files `other` read in this run: read once per command
        self._digests, self._files = other._digests, other._files
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

    def _current(self, kind: CacheKind, name: str, read: Callable[[str, Any], T | None]) -> T | None:
        """`read(key, payload)` of the environment's payload of `kind` under its current key, when it names the
        environment and its recorded inputs kept their bytes; None when anything in it is not as written."""
        key = self.key(name)
        payload = self.read_payload(kind, key)
        try:
            if payload is None or payload["name"] != name or not self.inputs_unchanged(payload["inputs"]):
                return None
            return read(key, payload)
        except (KeyError, TypeError, ValueError, AttributeError):
            return None

    def lookup(self, name: str) -> Compiled | None:
        def read(key: str, payload: Any) -> Compiled | None:
            chart, findings, inputs, crds = _entry_facts(payload)
            objects, chart_objects = (
                tuple(RenderedObject(o["document"], str(o["template"]), location_from_json(o["location"]))
                      for o in payload[field]) for field in ("objects", "chartObjects"))
            if not all(isinstance(o.document, dict) for o in objects + chart_objects) \
                    or not isinstance(payload["helmValues"], dict):
                return None
            files = {str(path): text.encode("utf-8") for path, text in payload["files"].items()}
            return Compiled(name, key, chart, files, objects, payload["helmValues"], findings, chart_objects,
                            from_cache=True, inputs_digest=inputs, crds=crds)

        return self._current(COMPILED, name, read)

    def summary(self, name: str) -> Summary | None:
        """Its current entry's trustworthy summary, kept once found (until stored; a worker may store it later)."""
        found = self._summaries.get(name) or self._read_summary(name)
        return self._summaries.setdefault(name, found) if found else None

    def _read_summary(self, name: str) -> Summary | None:
        def read(key: str, payload: Any) -> Summary | None:
            chart, findings, inputs, crds = _entry_facts(payload)
            digests, objects = payload["files"], payload["objects"]
            if not isinstance(digests, dict) or not all(isinstance(v, str) for v in digests.values()) \
                    or not isinstance(objects, int):
                return None
            return Summary(name, key, chart, objects, findings, digests, inputs,
                           tuple(str(path) for path, _ in payload["inputs"]), crds)

        return self._current(SUMMARIES, name, read)

    def recorded_inputs(self, inputs: Iterable[Path]) -> list[list[str]]:
        """[path, sha256] of each file, sorted: the path relative to the project, absolute when outside it."""
        root = self.project.resolved_root
        recorded = []
        for path in set(inputs):
            resolved = path.resolve()
            shown = resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else str(resolved)
            recorded.append([shown, self.digest(resolved)])
        return sorted(recorded)

    def store(self, compiled: Compiled, recorded: list[list[str]]) -> None:
        """Keep `compiled`, valid while the `recorded` inputs (its layers, files its findings read) keep their
        bytes. A result that read a file outside the project is not kept."""
        self._summaries.pop(compiled.name, None)
        if not self.enabled or any(path.startswith("/") for path, _ in recorded):
            return
        try:
            files = {path: content.decode("utf-8") for path, content in compiled.files.items()}
        except UnicodeDecodeError:
            return
        self.write_payload(SUMMARIES, compiled.key, {
            "name": compiled.name, "chart": list(compiled.chart), "inputs": recorded, "objects": compiled.object_count,
            "findings": [problem_to_json(p) for p in compiled.findings], "files": file_digests(compiled.files),
            "crds": compiled.crds})
        self.write_payload(COMPILED, compiled.key, {
            "name": compiled.name, "chart": list(compiled.chart), "inputs": recorded, "files": files,
            "crds": compiled.crds,
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
