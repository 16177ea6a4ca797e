"""Cache entries are verified before they are believed (compiler/cache/store.py): the Helm answers krc keeps are
ignored and computed again when they were edited, cut short, replaced by a link, or sit in a folder another user
may write to; the render is always the engine's, and the run exits 0."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from compiler.cache import store
from compiler.charts import helm_template
from compiler.cli import main
from compiler.documents import yamlio
from compiler.project.paths import Project

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
    [entry] = sorted(p for p in (tmp_path / "cache" / helm_template.CACHE.name).rglob("*") if p.is_file())
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
    assert helm_template.CACHE.read(entry.name) is not None  # rewritten, trusted again
    assert not entry.is_symlink()


def test_a_folder_others_may_write_to_is_ignored_with_one_warning(project: Project,
                                                                   rendered_once: tuple[Path, dict]):
    entry, first = rendered_once
    _poisoned(entry)
    os.chmod(entry.parent, 0o777)
    header, _, payload = entry.read_bytes().partition(b"\n")
    fixed = helm_template.CACHE._header(entry.name, payload)  # a consistent entry: only the folder is wrong
    entry.write_bytes(fixed + payload)
    store._WARNED.clear()
    code, files, stderr = _render(project)
    assert code == 0 and files == first
    assert stderr.count("ignoring the cache in") == 1 and "chmod 700" in stderr
    os.chmod(entry.parent, 0o700)
    assert helm_template.CACHE.read(entry.name) == payload  # the same entry, once trusted


def test_an_entry_of_another_kind_version_key_or_format_is_not_believed(tmp_path: Path):
    root, key, other = tmp_path / "store", store.cache_key("a"), store.cache_key("b")
    kind = store.CacheKind("kind-a", 1)
    kind.write(key, b"{}", root)
    assert kind.read(key, root) == b"{}"
    assert store.CacheKind("kind-a", 2).read(key, root) is None  # another version of its record
    path = Path(kind.entry_path(key, root))
    moved = Path(kind.entry_path(other, root))  # an entry copied under another key
    moved.parent.mkdir(mode=0o700, exist_ok=True)
    moved.write_bytes(path.read_bytes())
    moved.chmod(0o600)
    assert kind.read(other, root) is None
    path.write_bytes(path.read_bytes().replace(store.FORMAT.encode(), b"krc-cache/0"))
    assert kind.read(key, root) is None


def test_no_folder_from_the_root_down_may_be_a_link_or_writable_by_others(tmp_path: Path):
    root, key = tmp_path / "store", store.cache_key("a")
    kind = store.CacheKind("kind-a", 1)
    kind.write(key, b"{}", root)
    os.chmod(root, 0o777)
    store._WARNED.clear()
    assert kind.read(key, root) is None
    os.chmod(root, 0o700)
    linked = tmp_path / "linked"
    linked.symlink_to(root)
    assert kind.read(key, root) == b"{}" and kind.read(key, linked) is None


def test_a_failed_write_leaves_nothing_behind(tmp_path: Path):
    root, key = tmp_path / "store", store.cache_key("a")
    kind = store.CacheKind("kind-a", 1)
    kind.write_json(key, {"not": {1, 2}}, root)  # not JSON: nothing is written, no temporary file left
    kind.write(key, b"{}", root)
    blocked = store.cache_key("blocked")
    Path(kind.entry_path(blocked, root)).mkdir(parents=True)  # the rename onto it fails: best effort, no error
    kind.write(blocked, b"[]", root)
    assert [p.name for p in root.rglob("*") if p.is_file()] == [key] and kind.read(key, root) == b"{}"


def test_the_autoscaler_answers_are_verified_entries_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from compiler.autoscaler import run as autoscaler_run

    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))
    key = store.cache_key("2.58.0", "cluster")
    autoscaler_run.CACHE.write_json(key, {"available_node_types": {"cpu": {"max_workers": 2}}})
    assert autoscaler_run._read_cached(key) == {"available_node_types": {"cpu": {"max_workers": 2}}}
    path = Path(autoscaler_run.CACHE.entry_path(key))
    path.write_bytes(path.read_bytes().replace(b'"max_workers":2', b'"max_workers":200'))
    assert autoscaler_run._read_cached(key) is None  # edited: a miss, the generator runs again


def _render_cached(project: Project) -> tuple[int, dict[str, bytes], str]:
    result = CliRunner().invoke(main, ["--project", str(project.root), "render", "dev"])
    files = {p.relative_to(project.rendered_dir).as_posix(): p.read_bytes()
             for p in sorted(project.rendered_dir.rglob("*")) if p.is_file()}
    return result.exit_code, files, result.stderr


def test_a_compiled_result_edited_in_the_cache_is_compiled_again(project: Project, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch):
    """Every kind the render keeps (compiled results, summaries, output stamps, destinations, Helm answers): an
    entry whose payload was edited without its digest is a miss; what the render writes is the engine's again."""
    monkeypatch.setenv("KRC_CACHE_DIR", str(tmp_path / "cache"))
    code, first, _ = _render_cached(project)
    assert code == 0
    kinds = {p.relative_to(tmp_path / "cache").parts[0] for p in (tmp_path / "cache").rglob("*") if p.is_file()}
    assert {"compiled", "summaries", "outputs", "destinations", "helm-template"} <= kinds
    shutil.rmtree(project.rendered_dir)
    binding = json.dumps(yamlio.dump(BINDING))[1:-1].encode()  # a YAML file as the compiled payload holds it
    edited = set()
    for entry in (p for p in (tmp_path / "cache").rglob("*") if p.is_file()):
        header, _, payload = entry.read_bytes().partition(b"\n")
        changed = payload.replace(b'"files":{', b'"files":{"manifests/owned.yaml":"' + binding + b'",', 1) \
            .replace(b"ray-demo", b"ray-pwnd")
        if changed != payload:
            edited.add(entry.relative_to(tmp_path / "cache").parts[0])
            entry.write_bytes(header + b"\n" + changed)
    assert {"compiled", "helm-template"} <= edited
    code, files, _ = _render_cached(project)
    assert code == 0 and files == first
    assert b"ClusterRoleBinding" not in b"".join(files.values()) and b"ray-pwnd" not in b"".join(files.values())


def test_a_cache_root_others_may_write_to_is_not_used(project: Project, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "shared-cache"
    monkeypatch.setenv("KRC_CACHE_DIR", str(root))
    code, first, _ = _render_cached(project)
    assert code == 0
    os.chmod(root, 0o777)  # a shared /tmp/krc-cache: anyone may have replaced what is in it
    store._WARNED.clear()
    shutil.rmtree(project.rendered_dir)
    code, files, stderr = _render_cached(project)
    assert code == 0 and files == first
    assert stderr.count("ignoring the cache in") == 1 and str(root) in stderr
