"""The plugin's annotated CRDs: their text comes from each CRD's canonical text with only the metadata encoded
anew, and must be, byte for byte, what encoding the decoded, annotated document gives (every chart krc pins)."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from compiler.argocd.selection import CRD_ANNOTATIONS, AnnotatedCrd
from compiler.argocd.stream import dump_stream
from compiler.charts.package import read_chart

CHART_VERSIONS = ("1.5.2", "1.6.2", "1.7.0")  # the charts of ../shared/kuberay (tests/conftest.py)


def _decoded_and_annotated(crd: AnnotatedCrd) -> dict:
    document = json.loads(crd.crd.canonical)
    document["metadata"]["annotations"] = {**document["metadata"].get("annotations", {}), **CRD_ANNOTATIONS}
    return document


@pytest.mark.parametrize("version", CHART_VERSIONS)
def test_annotated_crd_text_is_the_decoded_documents_text(charts_dir: Path, version: str):
    crds = [AnnotatedCrd(crd) for crd in read_chart(charts_dir / f"kuberay-operator-{version}.tgz").crds]
    assert len(crds) >= 3
    for crd in crds:
        want = json.dumps(_decoded_and_annotated(crd), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        assert crd.canonical() == want
        assert crd.document == json.loads(want)
    stream = dump_stream(crds)
    assert stream == "".join(f"---\n{c.canonical()}\n" for c in crds)


def test_a_crd_whose_canonical_text_has_no_metadata_member_is_encoded_from_its_document(charts_dir: Path):
    crd = read_chart(charts_dir / "kuberay-operator-1.7.0.tgz").crds[0]
    document = json.loads(crd.canonical)
    odd = dataclasses.replace(crd, canonical=json.dumps(document))  # not canonical: spaces after separators
    annotated = AnnotatedCrd(odd)
    want = json.dumps(_decoded_and_annotated(annotated), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert annotated.canonical() == want


def test_an_annotated_crd_yaml_would_not_keep_verbatim_is_written_as_yaml_of_its_document(charts_dir: Path):
    crd = read_chart(charts_dir / "kuberay-operator-1.7.0.tgz").crds[0]
    document = json.loads(crd.canonical)
    document["spec"]["names"]["singular"] = "line\u2028separator"
    odd = AnnotatedCrd(dataclasses.replace(crd, canonical=json.dumps(document, sort_keys=True, ensure_ascii=False,
                                                                      separators=(",", ":"))))
    stream = dump_stream([odd])
    assert not stream.splitlines()[1].startswith("{")
    assert list(yaml.load_all(stream, Loader=yaml.CSafeLoader)) == [_decoded_and_annotated(odd)]
