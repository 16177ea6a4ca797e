"""Cache entries are verified before they are believed (cache_store): the Helm answers krc keeps are ignored and
computed again when they were edited, cut short, replaced by a link, or sit in a folder another user may write
to; the render is always the engine's, and the run exits 0."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from compiler import cache_store
from compiler.charts import helm_template
from compiler.cli import main
from compiler.project import Project

BINDING = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
           "metadata": {"name": "owned"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                                     "kind": "ClusterRole", "name": "cluster-admin"},
           "subjects": [{"kind": "Group", "name": "system:authenticated"}]}


def _render(project: Project) -> tuple[int, dict[str, bytes], str]:
    # without the compile cache (verified on its own), so the chart comes from the Helm answers kept
    result = CliRunner().invoke(main, ["--project", str(project.root), "render", "--no-cache", "dev"])
    files = {p.relative_to(project.rendered_dir).as_posix(): p.read_bytes()
             for p in sorted(project.rendered_dir.rglob("*")) if p.is_file()}
    return result.exit_code, files, result.stderr


@pytest.fixture
def rendered_once(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict]:
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))
    code, files, _ = _render(project)
    assert code == 0
    [entry] = sorted((tmp_path / "cache" / helm_template.CACHE_FOLDER).iterdir())
    return entry, files


def _poisoned(entry: Path) -> None:
    header, _, payload = entry.read_bytes().partition(b"\n")
    answer = json.loads(payload)
    answer["documents"].append(BINDING)
    entry.write_bytes(header + b"\n" + json.dumps(answer).encode())


@pytest.mark.parametrize("attack", ["poisoned", "truncated", "flipped", "symlink"])
def test_a_tampered_entry_is_computed_again(attack: str, project: Project, rendered_once: tuple[Path, dict],
                                            tmp_path: Path):
    entry, first = rendered_once
    if attack == "poisoned":
        _poisoned(entry)
    elif attack == "truncated":
        entry.write_bytes(entry.read_bytes()[:200])
    elif attack == "flipped":
        data = bytearray(entry.read_bytes())
        data[len(data) // 2] ^= 0x01
        entry.write_bytes(bytes(data))
    else:  # a link to an entry elsewhere (a valid one, poisoned by whoever owns that place)
        elsewhere = tmp_path / "elsewhere.json"
        elsewhere.write_bytes(entry.read_bytes())
        _poisoned(elsewhere)
        entry.unlink()
        entry.symlink_to(elsewhere)
    code, files, _ = _render(project)
    assert code == 0 and files == first
    assert b"ClusterRoleBinding" not in b"".join(files.values())
    assert cache_store.read_entry(entry, helm_template.CACHE_FOLDER) is not None  # rewritten, trusted again
    assert not entry.is_symlink()


def test_a_folder_others_may_write_to_is_ignored_with_one_warning(project: Project,
                                                                   rendered_once: tuple[Path, dict]):
    entry, first = rendered_once
    _poisoned(entry)
    os.chmod(entry.parent, 0o777)
    header, _, payload = entry.read_bytes().partition(b"\n")
    fixed = cache_store._header(helm_template.CACHE_FOLDER, payload)  # a consistent entry: only the folder is wrong
    entry.write_bytes(fixed + payload)
    cache_store._WARNED.clear()
    code, files, stderr = _render(project)
    assert code == 0 and files == first
    assert stderr.count("ignoring the cache in") == 1 and "chmod 700" in stderr
    os.chmod(entry.parent, 0o700)
    assert cache_store.read_entry(entry, helm_template.CACHE_FOLDER) == payload  # the same entry, once trusted


def test_an_entry_of_another_kind_or_format_is_not_believed(tmp_path: Path):
    path = tmp_path / "store" / "kind-a" / "x.json"
    cache_store.write_entry(path, "kind-a", b"{}")
    assert cache_store.read_entry(path, "kind-a") == b"{}"
    assert cache_store.read_entry(path, "kind-b") is None
    path.write_bytes(path.read_bytes().replace(cache_store.FORMAT.encode(), b"krc-cache/0"))
    assert cache_store.read_entry(path, "kind-a") is None


def test_the_autoscaler_answers_are_verified_entries_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from compiler.autoscaler import run as autoscaler_run

    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))
    path = autoscaler_run._cache_file("2.58.0", "k")
    autoscaler_run._write_cached(path, {"available_node_types": {"cpu": {"max_workers": 2}}})
    assert autoscaler_run._read_cached(path) == {"available_node_types": {"cpu": {"max_workers": 2}}}
    path.write_bytes(path.read_bytes().replace(b'"max_workers":2', b'"max_workers":200'))
    assert autoscaler_run._read_cached(path) is None  # edited: a miss, the generator runs again
