"""The floor for `krc render`: the least work that makes the same files from the same templates, in one process.

Per environment: load its YAML and its base with PyYAML's C loader, merge them (maps deeply, named lists by name),
render the values template and the object templates with gojsonnet (one VM run each, as krc does), run the pinned
Helm's `helm template` of the operator chart with those values (as krc does, with the same Go runtime settings),
dump every document with PyYAML's C dumper and write the same folders `krc render` writes (manifests, chart
objects, values, CRDs). No validation, lint, provenance, cache or error handling.
Usage: python bench/floor.py PROJECT OUT [HELM]   (HELM: the helm binary; default engine/bin/helm: make helm-cli)
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import _gojsonnet
import yaml

Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            out[key] = merge(base[key], value) if key in base else value
        return {k: v for k, v in out.items() if v is not None}
    if isinstance(base, list) and isinstance(over, list) and all(isinstance(i, dict) and "name" in i
                                                                  for i in base + over):
        items = {i["name"]: i for i in base}
        for item in over:
            items[item["name"]] = merge(items[item["name"]], item) if item["name"] in items else item
        return list(items.values())
    return over


def chart(vendor: Path, version: str) -> dict[str, Any]:
    with tarfile.open(vendor / "charts" / f"kuberay-operator-{version}.tgz") as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]
    meta = yaml.load(members["kuberay-operator/Chart.yaml"], Loader=Loader)
    crds = {n.rsplit("/", 1)[1]: b for n, b in members.items() if "/crds/" in n}
    # the kind under spec.names, without parsing megabytes of schema
    kinds = sorted(re.search(rb"\n  names:\n(?:    .*\n)*?    kind: (\w+)", text)[1].decode()  # type: ignore[index]
                   for text in crds.values())
    return {"context": {"name": meta["name"], "version": meta["version"], "appVersion": meta.get("appVersion", ""),
                        "defaults": yaml.load(members["kuberay-operator/values.yaml"], Loader=Loader),
                        "kinds": kinds}, "crds": crds}


def helm_template(helm: str, archive: Path, namespace: str, values: dict[str, Any]) -> list[Any]:
    with tempfile.TemporaryDirectory() as scratch:
        (Path(scratch) / "values.json").write_text(json.dumps(values, sort_keys=True), encoding="utf-8")
        text = subprocess.run([helm, "template", "kuberay-operator", str(archive), "--namespace", namespace,
                               "--kube-version", "1.33", "--skip-crds", "--values", "values.json"], cwd=scratch,
                              env={"PATH": os.environ["PATH"], "HOME": scratch, "HELM_NO_PLUGINS": "1",
                                   "GOGC": "off", "GOMEMLIMIT": "512MiB"},
                              check=True, capture_output=True, text=True).stdout
    return [d for d in yaml.load_all(text, Loader=Loader) if d]


def main(project: Path, out: Path, helm: str) -> None:
    templates = project / "templates"
    values_template = str(templates / "values" / "kuberay-operator.jsonnet")
    objects = sorted(p.relative_to(templates).as_posix() for p in (templates / "objects").glob("*.jsonnet"))
    snippet = "{" + ",".join(f"{json.dumps(k)}: import {json.dumps(k)}" for k in objects) + "}"
    natives = {"yaml": (("json",), lambda text: yaml.dump(json.loads(text), Dumper=Dumper, sort_keys=True))}
    base = yaml.load((project / "environments" / "base.yaml").read_bytes(), Loader=Loader)
    charts: dict[str, dict[str, Any]] = {}
    for path in sorted((project / "environments").glob("*.yaml")):
        if path.stem == "base":
            continue
        own = yaml.load(path.read_bytes(), Loader=Loader)
        env = merge(base, {k: v for k, v in own.items() if k != "extends"})
        version = env["operator"]["chart"]["version"]
        pinned = charts.setdefault(version, chart(project / "vendor", version))
        context = {"env": env, "environment": path.stem, "chart": pinned["context"]}
        values = json.loads(_gojsonnet.evaluate_file(values_template, ext_codes={
            k: json.dumps(v) for k, v in context.items()}, native_callbacks=natives))
        values = merge(values, env["operator"].get("values", {}))
        version_archive = project / "vendor" / "charts" / f"kuberay-operator-{version}.tgz"
        chart_docs = helm_template(helm, version_archive, env["operator"].get("namespace", "default"), values)
        ext = {k: json.dumps(v) for k, v in {**context, "helmValues": values}.items()}
        rendered = json.loads(_gojsonnet.evaluate_snippet(str(templates / "batch.jsonnet"), snippet, ext_codes=ext,
                                                          native_callbacks=natives))
        folder = out / path.stem
        (folder / "manifests").mkdir(parents=True, exist_ok=True)
        (folder / "helm").mkdir(exist_ok=True)
        (folder / "crds").mkdir(exist_ok=True)
        (folder / "chart").mkdir(exist_ok=True)
        for doc in chart_docs:
            target = folder / "chart" / f"{doc['kind'].lower()}-{doc['metadata']['name']}.yaml"
            target.write_text(yaml.dump(doc, Dumper=Dumper, sort_keys=True), encoding="utf-8")
        for name in objects:
            for doc in rendered[name]:
                target = folder / "manifests" / f"{doc['kind'].lower()}-{doc['metadata']['name']}.yaml"
                target.write_text(yaml.dump(doc, Dumper=Dumper, sort_keys=True), encoding="utf-8")
        (folder / "helm" / "kuberay-operator.values.yaml").write_text(yaml.dump(values, Dumper=Dumper))
        for name, content in pinned["crds"].items():
            (folder / "crds" / name).write_bytes(content)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]),
         sys.argv[3] if len(sys.argv) > 3 else str(Path(__file__).resolve().parents[1] / "engine" / "bin" / "helm"))
