"""The plugin's stdout stream: canonical YAML objects, CRDs as one JSON line, both read back identically."""
from __future__ import annotations

import yaml

from compiler.argocd.stream import dump_stream
from compiler.diagnostics.problems import Location
from compiler.environment.schema import validate_layer


def _crd(description: str) -> dict:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com"}, "spec": {"description": description, "n": [1, 2.5, None]}}


def test_crds_are_json_lines_and_objects_yaml_and_both_read_back():
    documents = [_crd("plain ascii, \"quoted\" and \t tabbed\nmultiline é"), {"apiVersion": "v1", "kind": "Namespace",
                                                                             "metadata": {"name": "ray"}}]
    stream = dump_stream(documents)
    lines = stream.splitlines()
    assert lines[0] == "---" and lines[1].startswith("{") and lines[2] == "---" and lines[3] == "apiVersion: v1"
    assert list(yaml.load_all(stream, Loader=yaml.CSafeLoader)) == documents
    assert dump_stream(documents) == stream


def test_characters_yaml_would_not_keep_verbatim_fall_back_to_yaml():
    for odd in ("line\u2028separator", "delete\x7f", "next\x85line", "bom\ufeff"):
        document = _crd(odd)
        stream = dump_stream([document])
        assert not stream.splitlines()[1].startswith("{")
        assert list(yaml.load_all(stream, Loader=yaml.CSafeLoader)) == [document]


def test_environment_schema_for_argocd():
    def problems(argocd: dict) -> list[str]:
        return [f"{p.message}; {p.help}" for p in validate_layer({"argocd": argocd}, {}, Location("env.yaml"))]

    assert problems({"repoURL": "https://git.example.com/r.git", "destination": {"name": "prod"}, "crds": "x"}) == []
    assert problems({"destination": {"name": "prod", "server": "https://k8s"}})  # exactly one of them
    assert any("repoUrl" in m and "repoURL" in m for m in problems({"repoUrl": "https://git.example.com/r.git"}))
    assert problems({"name": "Not_A_Name"})
