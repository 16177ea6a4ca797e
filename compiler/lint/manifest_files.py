"""Path mode: lint manifests as they are, against a chart version's CRDs and feature gates."""
from __future__ import annotations

import os
from pathlib import Path

from ..charts import repository, vendor
from ..charts.package import Chart
from ..diagnostics.problems import KrcError, Location
from ..documents.yamlio import load_all_with_positions
from ..project.paths import find_project
from ..rules.support.context import LintContext, LintObject
from ..rules.support.feature_gates import chart_default_gates, known_gates
from ..rules.support.versions import parse_version

CHART_NAME = "kuberay-operator"
# the upstream chart repository; KRC_CHART_REPOSITORY overrides it (mirrors, offline copies)
DEFAULT_REPOSITORY = repository.KUBERAY_REPOSITORY
YAML_SUFFIXES = (".yaml", ".yml")


def _shown(path: Path) -> str:
    """A path relative to the working directory, as users type it (`../shared/x.yaml`, not `/abs/../shared`)."""
    return Path(os.path.relpath(path.resolve(), Path.cwd().resolve())).as_posix()


def collect_files(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.suffix in YAML_SUFFIXES and p.is_file()))
        elif path.is_file():
            files.append(path)
        else:
            raise KrcError(f"{path} does not exist; pass YAML files or directories")
    return list(dict.fromkeys(files))


def load_objects(files: list[Path]) -> tuple[LintObject, ...]:
    objects = []
    for path in files:
        shown = _shown(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise KrcError(f"cannot read {shown}: {err}; check the file") from None
        for document, positions in load_all_with_positions(text, shown):
            if isinstance(document, dict) and document.get("kind"):
                objects.append(LintObject(document, positions.get((), Location(shown, 1, 1)), positions))
    return tuple(objects)


def parse_feature_gates(text: str, operator_version: str) -> dict[str, bool]:
    """'A=true,B=false' as the operator's --feature-gates flag takes it; unknown names are bad input."""
    known = known_gates(operator_version)
    gates: dict[str, bool] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip().lower()
        if not sep or value not in ("true", "false"):
            raise KrcError(f"--feature-gates item '{item}' is not NAME=true or NAME=false; fix it")
        if name not in known:
            raise KrcError(f"feature gate '{name}' does not exist in kuberay-operator {operator_version}; "
                           f"use one of {', '.join(sorted(known))}")
        gates[name] = value == "true"
    return gates


def _vendor_dir(start: Path) -> Path | None:
    try:
        return find_project(start).vendor_dir
    except KrcError:
        return None


def newest_version(start: Path) -> str:
    """The newest chart version in the repository, else the newest vendored one (offline)."""
    repo = repository.effective_repository(DEFAULT_REPOSITORY)
    try:
        versions = repository.chart_versions(repo, CHART_NAME)
    except KrcError:
        vendor_dir = _vendor_dir(start)
        archives = sorted((vendor_dir / "charts").glob(f"{CHART_NAME}-*.tgz")) if vendor_dir else []
        versions = [p.name[len(CHART_NAME) + 1:-4] for p in archives]
        if not versions:
            raise
    parsed = [(parse_version(v), v) for v in versions if parse_version(v)]
    if not parsed:
        raise KrcError(f"{repo} lists no version of {CHART_NAME}; pass --kuberay-version")
    return max(parsed)[1]


def load_chart(version: str, start: Path) -> Chart:
    """The chart from the project's vendor cache when it is there, else from the chart repository."""
    return vendor.vendored_or_downloaded(_vendor_dir(start), CHART_NAME, version, DEFAULT_REPOSITORY)


def paths_context(paths: list[Path], kuberay_version: str | None = None, feature_gates: str = "",
                  start: Path | None = None) -> LintContext:
    start = start or Path(os.getcwd())
    files = collect_files(paths)
    version = kuberay_version or newest_version(start)
    if parse_version(version) is None:
        raise KrcError(f"--kuberay-version '{version}' is not a version; write it like 1.7.0")
    chart = load_chart(version, start)
    gates = chart_default_gates(version, chart.values)
    gates.update(parse_feature_gates(feature_gates, version))
    return LintContext(objects=load_objects(files), operator_version=version, feature_gates=gates, chart=chart,
                       mode="paths")
