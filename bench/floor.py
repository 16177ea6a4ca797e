"""The floor for `krc render`: the least work that makes the same files from the same templates, in one process.

Per environment: load its YAML and its base with PyYAML's C loader, merge them (maps deeply, named lists by name),
render the values template with Jinja2 and the object templates with gojsonnet (one VM run, as krc does), dump
every document with PyYAML's C dumper and write the same folders `krc render` writes (manifests, values, CRDs).
No validation, lint, provenance or error handling. Usage: python bench/floor.py PROJECT OUT
"""
from __future__ import annotations

import json
import re
import sys
import tarfile
from pathlib import Path
from typing import Any

import _gojsonnet
import jinja2
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


def main(project: Path, out: Path) -> None:
    templates = project / "templates"
    jinja = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates)), undefined=jinja2.StrictUndefined,
                               keep_trailing_newline=True)
    jinja.filters["to_yaml"] = lambda value: json.dumps(value, sort_keys=True)
    values_template = jinja.get_template("values/kuberay-operator.yaml.j2")
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
        values = merge(yaml.load(values_template.render(**context), Loader=Loader), env["operator"].get("values", {}))
        ext = {k: json.dumps(v) for k, v in {**context, "helmValues": values}.items()}
        rendered = json.loads(_gojsonnet.evaluate_snippet(str(templates / "batch.jsonnet"), snippet, ext_codes=ext,
                                                          native_callbacks=natives))
        folder = out / path.stem
        (folder / "manifests").mkdir(parents=True, exist_ok=True)
        (folder / "helm").mkdir(exist_ok=True)
        (folder / "crds").mkdir(exist_ok=True)
        for name in objects:
            for doc in rendered[name]:
                target = folder / "manifests" / f"{doc['kind'].lower()}-{doc['metadata']['name']}.yaml"
                target.write_text(yaml.dump(doc, Dumper=Dumper, sort_keys=True), encoding="utf-8")
        (folder / "helm" / "kuberay-operator.values.yaml").write_text(yaml.dump(values, Dumper=Dumper))
        for name, content in pinned["crds"].items():
            (folder / "crds" / name).write_bytes(content)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
