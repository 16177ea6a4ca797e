"""The reviews of unchanged environments, answered from one file per project: `krc diff` at scale.

A pull request changes a few of hundreds of environments. For each of the others `krc diff` would read its golden/
digest memo, its compile summary and its kept review: three files, three checksums and three JSON parses per
environment, half a second at 500. The review memo keeps, in one file per project, each unchanged environment's
result beside the signatures (device, inode, size, modification and change times in ns) of every file it was
reviewed from: its golden/ files and the layers it was compiled from. An environment whose files all keep their
signatures is answered from the memo, reading nothing else. The memo holds only under the krc code, templates/,
vendor/ and options (the compile cache's shared digest), policies and Ray generators it was written under (its
header), and what the environment reads of the others' destinations (its entry's peers); anything else is ignored,
never believed.

Signatures are taken before anything is read, so a file changed during the run has a newer signature than the
one remembered; one younger than signatures.RACY_SECONDS is never remembered (cache/signatures.py explains why). Only
the command's own process reads and writes the memo; concurrent runs each write it whole and atomically.
"""
from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from .. import review
from ..autoscaler.generators import installed_generators
from ..cache import CacheKind, cache_key
from ..cache import signatures as stat_memo
from ..diagnostics.problems import KrcError, errors_among, problem_from_json, problem_to_json
from ..documents.record_json import from_json, to_json
from ..output import folders
from ..project.paths import Project
from .context import Context
from .plans import Reviewed
from .review_batch import REVIEWS

MEMO = CacheKind("review-memo", 1)  # one entry per project
Signature = list[Any]  # [path, device, inode, size, mtime_ns, ctime_ns]


def _signature(path: str, stat: os.stat_result) -> Signature:
    return [path, *stat_memo.file_signature(stat)]


class ReviewMemo:
    """Opened before the command's Context exists (which environments changed decides whether the policy engine
    starts early), then bound to it: entries written under another header are dropped there."""

    def __init__(self, project: Project):
        self.project = project
        self.root = str(project.root.resolve())
        self.key = cache_key(self.root)
        self.started = time.time_ns()
        self.layers = self._layer_signatures()  # before anything is read
        self.header: list[Any] = []
        self.stored_header, self.entries = self._read()
        self.golden: dict[str, list[Signature]] = {}  # this run's signatures of each golden/<env>/ not answered
        self.changed = False
        self._context: Context | None = None

    def bind(self, context: Context) -> None:
        """What every entry depends on besides its own files; entries written under another are dropped."""
        self._context = context
        self.header = [REVIEWS.version, self.root, context.cache.shared,
                       context.cache.digest(self.project.policies_dir), repr(installed_generators(self.project.root))]
        if self.stored_header != self.header:
            self.entries = {}

    def _layer_signatures(self) -> dict[str, Signature]:
        """Every regular file of environments/, by its path relative to the project (as compile entries record)."""
        folder = self.project.environments_dir.resolve()
        found: dict[str, Signature] = {}
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_file(follow_symlinks=False):  # a link is left to the compile's own checks
                        relative = os.path.relpath(entry.path, self.root)
                        found[relative] = _signature(relative, entry.stat(follow_symlinks=False))
        except OSError:
            return {}
        return found

    def _read(self) -> tuple[Any, dict[str, Any]]:
        memo = MEMO.read_json(self.key)
        try:
            entries = memo["entries"]
            return (memo["header"], entries) if isinstance(entries, dict) else (None, {})
        except (OSError, ValueError, KeyError, TypeError):
            return None, {}

    def _golden_signatures(self, name: str) -> list[Signature] | None:
        """golden/<env>/'s files, sorted; None when golden/, the folder or anything in it is a link, FIFO or device
        (the full review reports that)."""
        try:
            files = folders.tree_files(self.project.golden_dir / name)
        except KrcError:
            return None
        return sorted(_signature(relative, entry.stat(follow_symlinks=False)) for relative, entry in files)

    def layers_kept(self, name: str) -> bool:
        """Whether `name` has an entry whose layers all keep their signatures (its golden/ is checked by answer)."""
        entry = self.entries.get(name)
        try:
            layers = entry["layers"] if isinstance(entry, dict) else None
            # every entry krc writes names at least the environment's own file, each with a signature
            return isinstance(layers, list) and bool(layers) and all(
                isinstance(signature, list) and self.layers.get(path) == signature for path, signature in layers)
        except (KeyError, TypeError, ValueError):
            return False

    def answer(self, name: str) -> Reviewed | None:
        """The remembered result of `name` when every file it was reviewed from keeps its signature."""
        golden = self._golden_signatures(name)
        if golden is None:
            return None
        self.golden[name] = golden
        if self._context is None:  # unbound: no header checked, nothing believed
            return None
        entry = self.entries.get(name)
        try:
            if not isinstance(entry, dict) or entry["golden"] != golden or not self.layers_kept(name) \
                    or entry["peers"] != self._context.cache.peers.get(name, ""):
                return None
            found = entry["result"]
            reviewed = from_json(review.EnvironmentReview, found["review"])
            if not isinstance(reviewed, review.EnvironmentReview) or reviewed.changed:
                return None
            chart_name, chart_version = found["chart"]
            return Reviewed(name, str(found["key"]), (str(chart_name), str(chart_version)), int(found["objects"]),
                            tuple(problem_from_json(p) for p in found["findings"]), False, review=reviewed)
        except (KeyError, TypeError, ValueError, AttributeError):
            return None

    def record(self, result: Reviewed) -> None:
        """Remember an unchanged environment's result, with the signatures taken before it was reviewed; not when
        a file it depends on lies outside environments/ and golden/, or changed within RACY_SECONDS."""
        golden, reviewed = self.golden.get(result.name), result.review
        if self._context is None or golden is None or reviewed.changed \
                or errors_among(result.findings):
            return
        summary = self._context.cache.summary(result.name)
        if summary is None or summary.key != result.key or not summary.input_files:
            return
        paths = sorted(set(summary.input_files))
        layers: list[Signature | None] = [self.layers.get(path) for path in paths]
        if any(signature is None or not stat_memo.settled(signature[1:], self.started)
               for signature in [*golden, *layers]):
            return
        kept = {"key": result.key, "chart": list(result.chart), "objects": result.objects,
                "findings": [problem_to_json(p) for p in result.findings], "review": to_json(reviewed)}
        self.entries[result.name] = {"golden": golden, "layers": [[path, signature] for path, signature
                                                                  in zip(paths, layers, strict=True)],
                                     "peers": self._context.cache.peers.get(result.name, ""), "result": kept}
        self.changed = True

    def save(self, names: Sequence[str]) -> None:
        """Write the memo when an entry was added, with the project's environments (`names`) only. Best effort: a
        read-only cache only costs speed."""
        if not self.changed or self._context is None:
            return
        memo = {"header": self.header, "entries": {n: self.entries[n] for n in sorted(names) if n in self.entries}}
        MEMO.write_json(self.key, memo)
