"""Every environment's compile summary in one cache entry per project, for the command's own process.

A warm command over hundreds of environments reads each one's summary (compile_cache: chart, findings, file
digests) to learn that its output is already right: one small entry per environment, each opened, read and
verified on its own. The index holds the same payloads under the same keys, one entry per project and shared
digest (krc, templates/, vendor/, options), so the command reads one file instead. An index payload is believed
exactly as the environment's own entry would be: only under the environment's current key, naming the
environment, with its recorded inputs unchanged (CompileCache._current checks all three); the store verifies the
index itself like any entry. The command's process writes it back when the summaries it learned differ from the
ones it found (a changed environment, one added or removed); worker processes never read it (one per job would
cost more than it saves), and what they stored reaches the index the next time a command reads it.
"""
from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from ..cache import CacheKind, cache_key

SUMMARY_INDEX = CacheKind("summary-index", 1)  # one entry per project and shared digest


class SummaryIndex:
    def __init__(self, root: str, shared: str, folder: Path | None = None) -> None:
        """`root`: the project's resolved root; `shared`: the digest every key of the command covers."""
        self.root = root
        self.folder = folder
        self.key = cache_key("summary-index", root, shared)
        self._found: dict[str, Any] | None = None  # by entry key, read when first asked
        self._learned: dict[str, Any] = {}  # by entry key: what this command read or stored

    def _entries(self) -> dict[str, Any]:
        if self._found is None:
            index = SUMMARY_INDEX.read_json(self.key, self.folder)
            entries = index.get("entries") if isinstance(index, dict) and index.get("root") == self.root else None
            self._found = entries if isinstance(entries, dict) else {}
        return self._found

    def payload(self, key: str) -> Any:
        """The summary payload the index holds under `key`, or None."""
        return self._entries().get(key)

    def learned(self, key: str, payload: Any) -> None:
        """A summary payload this command found current (read, from the index or its entry) or stored."""
        self._learned[key] = payload

    def save(self, current: Mapping[str, str], environments: Collection[str]) -> None:
        """Keep the summaries this command learned under `current` (its environments' keys, by name), and the
        index's entries of the project's other `environments`; nothing is written when that is what it holds."""
        kept = {key: payload for key, payload in self._entries().items()
                if isinstance(payload, dict) and payload.get("name") in environments
                and payload.get("name") not in current}
        entries = {**kept, **{key: self._learned[key] for key in current.values() if key in self._learned}}
        if entries != self._entries():
            SUMMARY_INDEX.write_json(self.key, {"root": self.root, "entries": entries}, self.folder)
            self._found = entries
