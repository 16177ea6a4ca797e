"""A chart read before is read again from krc's cache (charts/chart_texts.py) without unpacking its archive, and the
result is the chart a full read gives; an entry this krc does not write is never believed."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from project_support import REPO_ROOT

from compiler.charts import chart_texts, package
from compiler.charts.package import Chart, read_chart_bytes
from compiler.diagnostics.problems import KrcError

ARCHIVE = REPO_ROOT / ".." / "shared" / "kuberay" / "charts" / "kuberay-operator-1.7.0.tgz"


def _read(data: bytes) -> Chart:
    package._READ.clear()  # as a new process reads it
    return read_chart_bytes(data, ARCHIVE.name)


def _same(a: Chart, b: Chart) -> None:
    assert (a.name, a.version, a.app_version, a.values, a.templates) == \
        (b.name, b.version, b.app_version, b.values, b.templates)
    assert [c.facts() for c in a.crds] == [c.facts() for c in b.crds]


def test_a_chart_read_before_is_not_unpacked_again(private_cache: Path, monkeypatch: pytest.MonkeyPatch):
    data = ARCHIVE.read_bytes()
    first = _read(data)
    assert first.templates and first.values and len(first.crds) == 4
    names, texts = chart_texts.kept(hashlib.sha256(data).hexdigest()) or ([], {})
    assert "kuberay-operator/crds/ray.io_rayclusters.yaml" in names
    assert set(texts) == {"kuberay-operator/Chart.yaml", "kuberay-operator/values.yaml",
                          *(f"kuberay-operator/templates/{name}" for name, _ in first.templates)}

    def unpacked(*_: object) -> dict[str, bytes]:
        raise AssertionError("the archive was unpacked")

    monkeypatch.setattr(package, "_members", unpacked)
    _same(_read(data), first)


@pytest.mark.parametrize("entry", [
    {"names": "not a list", "texts": {}},
    {"names": ["kuberay-operator/Chart.yaml"], "texts": {"kuberay-operator/Chart.yaml": 7}},
    {"names": ["kuberay-operator/Chart.yaml"], "texts": {"kuberay-operator/other.yaml": "name: x"}},
    ["a", "list"],
])
def test_an_entry_of_another_layout_is_not_believed(private_cache: Path, entry: object):
    data = ARCHIVE.read_bytes()
    expected = _read(data)
    digest = hashlib.sha256(data).hexdigest()
    chart_texts.CHART_TEXTS.write_json(chart_texts._key(digest), entry)  # verified, of a layout krc never writes
    assert chart_texts.kept(digest) is None
    _same(_read(data), expected)
    assert chart_texts.kept(digest) is not None  # replaced by what this krc writes


def test_an_archive_over_a_lowered_bound_is_refused_though_read_before(private_cache: Path,
                                                                     monkeypatch: pytest.MonkeyPatch):
    data = ARCHIVE.read_bytes()
    _read(data)  # kept under the bounds in force
    monkeypatch.setenv("KRC_MAX_ARCHIVE_MEMBERS", "5")
    with pytest.raises(KrcError, match="member count"):
        _read(data)
