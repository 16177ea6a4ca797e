"""A chart's parsed CRDs, kept in krc's cache by the archive's digest: read back equal, and an entry that is not
what this krc writes is parsed again, never believed."""
from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

import pytest
from project_support import REPO_ROOT

from compiler.charts import package
from compiler.charts.package import CRD_CACHE, cached_crds, read_chart, read_chart_bytes
from compiler.documents import yamlio

CHARTS_DIR = REPO_ROOT / ".." / "shared" / "kuberay" / "charts"


@pytest.fixture
def archive() -> bytes:
    return (CHARTS_DIR / "kuberay-operator-1.7.0.tgz").read_bytes()


@pytest.fixture(scope="module")
def small_archive() -> bytes:
    """The 1.7.0 chart with each of its four CRDs cut down to its identity (the same names, group, kind and
    versions, an empty schema): what the cache's layout check reads, without parsing 4 MB of schemas per case."""
    out = io.BytesIO()
    with tarfile.open(CHARTS_DIR / "kuberay-operator-1.7.0.tgz", "r:gz") as source, \
            tarfile.open(fileobj=out, mode="w:gz") as target:
        for member in source.getmembers():
            data = source.extractfile(member).read() if member.isfile() else None  # type: ignore[union-attr]
            if data is not None and "/crds/" in member.name:
                crd = yamlio.load(data.decode(), member.name)
                spec = crd["spec"]
                versions = [{"name": v["name"], "served": v["served"], "storage": v["storage"],
                             "schema": {"openAPIV3Schema": {"type": "object"}}} for v in spec["versions"]]
                small = {"apiVersion": crd["apiVersion"], "kind": crd["kind"],
                         "metadata": {"name": crd["metadata"]["name"]},
                         "spec": {"group": spec["group"], "names": spec["names"], "scope": spec["scope"],
                                  "versions": versions}}
                data = yamlio.dump(small).encode()
                member.size = len(data)
            target.addfile(member, io.BytesIO(data) if data is not None else None)
    return out.getvalue()


def facts(data: bytes) -> list[tuple[str, str, str, str, tuple[str, ...], str, str]]:
    chart = read_chart_bytes(data, "kuberay-operator-1.7.0.tgz")
    return [(c.name, c.source, c.group, c.kind, c.served_versions, c.storage_version, c.canonical) for c in chart.crds]


CRD_FILES = [f"kuberay-operator/crds/ray.io_{plural}.yaml"
             for plural in ("rayclusters", "raycronjobs", "rayjobs", "rayservices")]


def _entry(crds: object, root: object = "kuberay-operator", files: object = CRD_FILES) -> dict[str, object]:
    return {"root": root, "files": files, "crds": crds}


# files other than the archive's: only a read that unpacks the archive can tell (an entry is never written so)
OTHER_FILES = _entry([[]] * 4, files=[name.replace("ray.io_", "other_") for name in CRD_FILES])


# each shaped unlike what this krc writes, or naming files other than the archive's
@pytest.mark.parametrize("entry", [
    [[["rayclusters.ray.io", "ray.io", "RayCluster", ["v1"], "v1", "{}"]]] * 4,  # the layout of version 1
    _entry([[["not", "the", "layout"]]] * 4),
    _entry([[["rayclusters.ray.io", "ray.io", "RayCluster", ["v1"], "v1", {"canonical": "not text"}]]] * 4),
    _entry([[["rayclusters.ray.io", "ray.io", "RayCluster", "v1", "v1", "{}"]]] * 4),  # served versions: a list
    _entry([["a"]] * 4),
    _entry([[]] * 3),  # a file short
    OTHER_FILES,
    _entry([[]] * 4, root="elsewhere"),  # files outside the chart's crds/
    _entry([[]] * 4, root=None),
    {"a": "mapping"},
    "text",
])
def test_an_entry_of_another_layout_is_parsed_again(private_cache: Path, small_archive: bytes, entry: object):
    digest = hashlib.sha256(small_archive).hexdigest()
    expected = facts(small_archive)  # parsed, and kept in the cache
    assert [name for name, *_ in expected] == ["rayclusters.ray.io", "raycronjobs.ray.io", "rayjobs.ray.io",
                                               "rayservices.ray.io"]
    assert CRD_CACHE.read_json(digest)["files"] == CRD_FILES
    CRD_CACHE.write_json(digest, entry)  # a verified entry, of a layout this krc does not write
    if entry is not OTHER_FILES:
        assert cached_crds(small_archive, "elsewhere.tgz", digest) is None  # never believed without unpacking either
    assert facts(small_archive) == expected
    assert CRD_CACHE.read_json(digest) != entry  # replaced by what this krc writes


def test_the_crds_come_from_the_cache_without_unpacking_the_archive(private_cache: Path, small_archive: bytes,
                                                                    monkeypatch: pytest.MonkeyPatch):
    """What a warm `krc argocd generate` reads: the CRDs of an archive some krc process read before, taken from
    the cache by its digest, equal to a parse's; an archive never read is not guessed at."""
    digest = hashlib.sha256(small_archive).hexdigest()
    assert cached_crds(small_archive, "kuberay-operator-1.7.0.tgz", digest) is None
    expected = facts(small_archive)  # another process's parse, kept in the cache

    def unpacked(*_: object) -> None:
        raise AssertionError("the archive was unpacked")

    monkeypatch.setattr(package, "_members", unpacked)
    crds = cached_crds(small_archive, "kuberay-operator-1.7.0.tgz", digest)
    assert crds is not None and [c.name for c in crds] == sorted(c.name for c in crds)
    assert [(c.name, c.source, c.group, c.kind, c.served_versions, c.storage_version, c.canonical)
            for c in crds] == expected
    assert [c.member for c in crds] == CRD_FILES


def test_the_pinned_charts_parsed_crds_are_in_the_cache_the_tests_start_from(private_cache: Path, archive: bytes):
    assert len((CRD_CACHE.read_json(hashlib.sha256(archive).hexdigest()) or {}).get("crds", ())) == 4


def test_the_same_archive_under_another_path_is_read_once(tmp_path: Path, archive: bytes):
    """A process that meets one chart archive in several places (project copies, `krc crd-diff` sources) unpacks and
    parses it once: what it read is keyed by the archive's digest, never by its path."""
    first, second = tmp_path / "a" / "chart.tgz", tmp_path / "b" / "chart.tgz"
    for path in (first, second):
        path.parent.mkdir()
        path.write_bytes(archive)
    assert read_chart(first) is read_chart(second)
    other = (CHARTS_DIR / "kuberay-operator-1.6.2.tgz").read_bytes()
    second.write_bytes(other)  # the same path, other bytes: read again
    assert read_chart(second) is not read_chart(first)
    assert read_chart(second).version == "1.6.2" and read_chart(first).version == "1.7.0"


@pytest.mark.parametrize("cached", [True, False])
def test_crd_files_are_unpacked_again_only_when_asked_for(private_cache: Path, small_archive: bytes, cached: bool):
    """A chart keeps its archive, not its CRD files: they are unpacked again the first time one is asked for (to
    write rendered/), each then one object, and exactly the archive's member, whether its facts came from the
    cache or from a parse."""
    if not cached:
        CRD_CACHE.write_json(hashlib.sha256(small_archive).hexdigest(), "not facts")
    else:
        read_chart_bytes(small_archive, "first")  # its facts in the cache
    chart = read_chart_bytes(small_archive, "kuberay-operator-1.7.0.tgz")
    shipped = chart.crds[0].shipped
    assert all(c.shipped is shipped for c in chart.crds)
    assert shipped._files is None  # nothing held but the archive
    with tarfile.open(fileobj=io.BytesIO(small_archive), mode="r:gz") as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}  # type: ignore[union-attr]
    for crd in chart.crds:
        assert crd.shipped_bytes == members[crd.member] and crd.member.endswith(crd.source)
        assert crd.shipped_bytes is crd.shipped_bytes  # one object: later copies are hard links (shared_files)
    assert set(shipped._files or {}) == {c.member for c in chart.crds}  # the CRD files, nothing else of the chart
