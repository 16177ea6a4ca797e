"""Where each environment deploys, kept in krc's cache: every command on many environments compares each one's
Argo CD destination with the others' (the destination-collision rule), and must not load every environment file
for it each time.

One index per project (one read instead of hundreds of small files), its entries each valid for its environment's
own key (krc's code, the input bounds, the environment file's bytes) and while every layer it extends keeps the
bytes recorded with it. An entry that does not check out is ignored, never believed; the index is rewritten only
when an entry changed, with the project's current environments only.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..cache import CacheKind, cache_key
from ..cache.digests import krc_fingerprint, limit_settings
from ..k8s.destinations import Destination
from .compile_cache import CompileCache

DESTINATIONS = CacheKind("destinations", 2)


class DestinationIndex:
    def __init__(self, cache: CompileCache):
        self.cache = cache
        project = cache.project
        fingerprint = krc_fingerprint(str(cache.folder) if cache.enabled else None)
        self.key = cache_key(fingerprint, str(project.root.resolve()))
        found = cache.read_payload(DESTINATIONS, self.key)
        self.entries: dict[str, Any] = found if isinstance(found, dict) else {}
        self.changed = False
        self.read: list[str] = []  # environments whose destination was read from their files in this run (new or
        # changed environment files)
        # what every entry's key shares, read once per index (the input bounds come from the environment)
        self._common = (fingerprint, limit_settings())

    def unread(self, names: Sequence[str]) -> int:
        """How many of `names` have no entry (every one without a cache, whose index is empty): their files must
        be read to know where they deploy."""
        return sum(name not in self.entries for name in names)

    def _entry_key(self, name: str) -> str:
        return cache_key(*self._common, name, self.cache.environment_digest(name))

    def destination(self, name: str) -> tuple[bool, Destination | None]:
        """(True, its destination or None when it renders no Argo CD Applications) from a trustworthy entry whose
        layers all kept their bytes; (False, None) when the environment must be loaded to know."""
        entry = self.entries.get(name)
        if not isinstance(entry, dict):
            return False, None
        try:
            if entry["key"] != self._entry_key(name) or not self.cache.inputs_unchanged(entry["inputs"]):
                return False, None
            found = entry["destination"]
            if found is None:
                return True, None
            environment, file, cluster, namespaces, layers = found
            if not all(isinstance(v, str) for v in (environment, file, cluster, *namespaces, *layers)):
                return False, None
            return True, Destination(environment, file, cluster, tuple(namespaces), layers=tuple(layers))
        except (KeyError, TypeError, ValueError, AttributeError):
            return False, None

    def store(self, name: str, destination: Destination | None, layers: Iterable[Path]) -> None:
        """Kept in memory until `save`; not kept when a layer lies outside the project."""
        self.read.append(name)
        root = self.cache.project.resolved_root
        recorded = []
        for path in sorted(set(layers)):
            resolved = path.resolve()
            if not resolved.is_relative_to(root):
                return
            recorded.append([resolved.relative_to(root).as_posix(), self.cache.digest(resolved)])
        found = None if destination is None else [destination.environment, destination.file, destination.cluster,
                                                  list(destination.namespaces), list(destination.layers)]
        self.entries[name] = {"key": self._entry_key(name), "inputs": recorded, "destination": found}
        self.changed = True

    def save(self, names: Sequence[str]) -> None:
        """Write the index when an entry changed, with the environments `names` only (the project's now)."""
        if self.changed:
            self.cache.write_payload(DESTINATIONS, self.key, {n: self.entries[n] for n in sorted(names)
                                                               if n in self.entries})
            self.changed = False
