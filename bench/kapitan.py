"""Kapitan on an inventory equivalent to a synthetic krc project, for bench/bench_scale.py.

Kapitan is installed by the benchmark into its own virtual environment under the benchmark's cache folder
($KRC_BENCH_CACHE, else ~/.cache/krc-bench), pinned below, with gojsonnet for its `--use-go-jsonnet` setup.
The inventory: a class with base.yaml's data, a class per chart version (the same chart facts krc gives its
templates), and a target per environment with its own data (reclass merges maps deeply, as krc's layers do here)
and its Helm values as krc computed them. The templates are krc's own, with `std.extVar(...)` read from the
inventory instead and krc's `yaml` native replaced by Kapitan's `yaml_dump`; Kapitan renders the objects and the
values file (jsonnet, YAML output), and the operator chart with the same pinned Helm, release, namespace,
Kubernetes version and values krc gives it (Kapitan's `helm` input, on the chart unpacked once per version, CRDs
left out as krc's `--skip-crds` does, Helm with the same Go runtime settings). Left to krc alone: the chart's CRD
files it writes per environment, validation, lint and the compile cache.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import yaml

KAPITAN_VERSION = "0.36.3"
GOJSONNET_VERSION = "0.22.0"


def bench_cache() -> Path:
    return Path(os.environ.get("KRC_BENCH_CACHE") or Path.home() / ".cache" / "krc-bench")


def install() -> Path:
    """The kapitan executable of the benchmark's own virtual environment (made once, then reused)."""
    venv = bench_cache() / f"kapitan-{KAPITAN_VERSION}"
    kapitan = venv / "bin" / "kapitan"
    if not kapitan.exists():
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
                        f"kapitan=={KAPITAN_VERSION}", f"gojsonnet=={GOJSONNET_VERSION}"], check=True)
    return kapitan


def _jsonnet_for_kapitan(text: str) -> str:
    inventory = "(import 'kapitan_inventory.libsonnet')"
    text = re.sub(r"std\.extVar\('(\w+)'\)", lambda m: f"{inventory}.{m[1]}", text)
    return text.replace("std.native('yaml')", "std.native('yaml_dump')")


def _dump(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=True), encoding="utf-8")


def _unpacked_charts(dest: Path, archives: dict[str, str]) -> dict[str, str]:
    """Each chart version's archive (the one krc's Helm renders) unpacked once: version -> folder (relative)."""
    folders = {}
    for version, archive_path in sorted(archives.items()):
        target = dest / "charts" / version
        with tarfile.open(archive_path) as archive:
            archive.extractall(target, filter="data")
        [chart] = [p for p in target.iterdir() if p.is_dir()]
        folders[version] = chart.relative_to(dest).as_posix()
    return folders


def build_inventory(krc_project: Path, dest: Path, contexts: dict[str, dict[str, Any]],
                    own_data: dict[str, dict[str, Any]], helm: Path) -> Path:
    """DEST as a Kapitan project. `contexts`: per environment, what krc's templates saw (env, environment,
    chart, helmValues) and how krc runs Helm for it (helmRelease: archive, release, namespace, kube_version);
    `own_data`: each environment file's own data (without `extends`); `helm`: the pinned Helm binary."""
    charts = _unpacked_charts(dest, {c["chart"]["version"]: c["helmRelease"]["archive"] for c in contexts.values()})
    templates = dest / "templates"
    shutil.copytree(krc_project / "templates", templates)
    for path in templates.rglob("*sonnet"):
        path.write_text(_jsonnet_for_kapitan(path.read_text(encoding="utf-8")), encoding="utf-8")
    for folder in ("objects", "lib", "values"):
        (templates / folder / "kapitan_inventory.libsonnet").write_text(
            "std.native('inventory')(std.extVar('target'), 'inventory/').parameters\n", encoding="utf-8")
    objects = sorted(p.name for p in (templates / "objects").glob("*.jsonnet"))
    (dest / "components").mkdir(parents=True)
    (dest / "components" / "objects.jsonnet").write_text(
        "local parts = [" + ", ".join(f"import '../templates/objects/{name}'" for name in objects) + "];\n"
        "{ [std.asciiLower(o.kind) + '-' + o.metadata.name]: o for part in parts for o in part }\n",
        encoding="utf-8")
    # the values: krc's Jsonnet values template, then the environment's operator.values over it
    (dest / "components" / "values.jsonnet").write_text(
        "local inventory = std.native('inventory')(std.extVar('target'), 'inventory/').parameters;\n"
        "local op = std.get(inventory.env, 'operator', {});\n"
        "{ 'kuberay-operator.values': std.mergePatch(import '../templates/values/kuberay-operator.jsonnet', "
        "std.get(op, 'values', {})) }\n", encoding="utf-8")

    base = yaml.safe_load((krc_project / "environments" / "base.yaml").read_text(encoding="utf-8"))
    compile_steps = [
        {"output_path": "manifests", "input_type": "jsonnet", "input_paths": ["components/objects.jsonnet"],
         "output_type": "yaml"},
        {"output_path": "helm", "input_type": "jsonnet", "input_paths": ["components/values.jsonnet"],
         "output_type": "yaml"},
    ]
    _dump(dest / "inventory" / "classes" / "base.yml",
          {"parameters": {"env": base, "kapitan": {"compile": compile_steps}}})
    for name, context in sorted(contexts.items()):
        version = context["chart"]["version"]
        chart_class = dest / "inventory" / "classes" / f"chart-{version.replace('.', '-')}.yml"
        if not chart_class.exists():
            _dump(chart_class, {"parameters": {"chart": context["chart"]}})
        release = context["helmRelease"]
        chart_step = {"output_path": "chart", "input_type": "helm", "input_paths": [charts[version]],
                      "helm_path": str(helm), "helm_values": context["helmValues"],
                      "helm_params": {"name": release["release"], "namespace": release["namespace"],
                                      "kube_version": release["kube_version"], "include_crds": False}}
        _dump(dest / "inventory" / "targets" / f"{name}.yml", {
            "classes": ["base", f"chart-{version.replace('.', '-')}"],
            # reclass appends a target's compile steps to its classes'
            "parameters": {"env": own_data[name], "environment": name, "helmValues": context["helmValues"],
                           "kapitan": {"vars": {"target": name}, "compile": [chart_step]}}})
    return dest


def compile_command(kapitan: Path, go_jsonnet: bool) -> list[str]:
    return [str(kapitan), "compile"] + (["--use-go-jsonnet"] if go_jsonnet else [])
