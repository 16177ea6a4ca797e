"""What cache keys are made of: a path's digest is the same by Path or by text, and never blocks or fails."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from compiler.cache.digests import path_digest, tree_digest
from compiler.project.paths import Project
from compiler.results.compile_cache import CompileCache


def test_a_path_digests_the_same_by_path_or_by_text_and_what_is_not_a_file_or_folder_as_empty(tmp_path: Path):
    file = tmp_path / "a.yaml"
    file.write_bytes(b"a: 1\n")
    assert path_digest(file) == path_digest(str(file)) == hashlib.sha256(b"a: 1\n").hexdigest()
    assert path_digest(tmp_path) == tree_digest(tmp_path) != ""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # opening it would wait for a writer forever
    assert path_digest(fifo) == path_digest(tmp_path / "missing") == path_digest(file / "below-a-file") == ""


def test_the_cache_reads_each_file_once_whichever_way_it_is_named(tmp_path: Path):
    (tmp_path / "environments").mkdir()
    own = tmp_path / "environments" / "dev.yaml"
    own.write_text("extends: base\n")
    cache = CompileCache(Project(tmp_path), enabled=False)
    first = cache.environment_digest("dev")
    own.write_text("extends: other\n")  # one command sees one version of each file
    assert first == hashlib.sha256(b"extends: base\n").hexdigest()
    assert cache.digest(own) == cache.digest(str(own)) == first
    assert cache.inputs_unchanged([["environments/dev.yaml", first]])  # as recorded: relative to the project
