"""`helm template` of a vendored chart with the pinned Helm: what the operator Application deploys, cached.

krc runs `helm template <chart> --name-template <release> --namespace <ns> --kube-version <v> --skip-crds` with
the environment's values (what Argo CD would run for a Helm source); the operator Application deploys this output
through the krc plugin (`operator=only`), so review and deployment share one Helm binary. The output
depends only on the chart archive, the values, release, namespace, Kubernetes version and Helm version, so it is
cached under that key in krc's cache dir: a warm render starts no process at all.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import yamlio
from ..problems import KrcError, Location
from ..user_cache import cache_dir
from .helm_pin import HelmPin, find_helm, helm_environment

TEMPLATE_TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class TemplateRequest:
    archive: Path
    archive_sha256: str
    release: str
    namespace: str
    kube_version: str  # 1.33
    values: dict[str, Any]

    def cache_key(self, helm_version: str) -> str:
        facts = [helm_version, self.archive_sha256, self.release, self.namespace, self.kube_version, self.values]
        return hashlib.sha256(json.dumps(facts, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


CACHE_FOLDER = "helm-template"  # in krc's cache: Helm's output by TemplateRequest.cache_key


def _cache_file(key: str) -> Path:
    return cache_dir() / CACHE_FOLDER / f"{key}.yaml"


def _store(key: str, text: str) -> None:
    """Best effort and atomic: concurrent renders (Argo CD runs several) never see half a file."""
    path = _cache_file(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmpl-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except OSError:
        pass


# Charts unpacked once per process, by archive digest: Helm reads a chart folder in three quarters of the CPU
# time it takes to unpack the archive itself, and every environment of a run renders one of a few charts.
_UNPACKED: dict[str, Path] = {}
_UNPACK_ROOT: list[tempfile.TemporaryDirectory[str]] = []  # removed when the process exits


def _chart_folder(request: TemplateRequest) -> Path:
    """The chart archive unpacked (regular files and folders inside the target only: tarfile's data filter);
    the archive itself when it does not hold exactly one chart folder."""
    if request.archive_sha256 in _UNPACKED:
        return _UNPACKED[request.archive_sha256]
    if not _UNPACK_ROOT:
        _UNPACK_ROOT.append(tempfile.TemporaryDirectory(prefix="krc-charts-"))
    target = Path(_UNPACK_ROOT[0].name) / request.archive_sha256
    try:
        data = request.archive.read_bytes()  # unpacked from the bytes whose digest matches the lock
        if hashlib.sha256(data).hexdigest() != request.archive_sha256:
            return request.archive
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            archive.extractall(target, filter="data")
    except (OSError, tarfile.TarError):
        return request.archive
    folders = [p for p in target.iterdir() if p.is_dir()]
    chosen = folders[0] if len(folders) == 1 and len(list(target.iterdir())) == 1 else request.archive
    _UNPACKED[request.archive_sha256] = chosen
    return chosen


def _run_helm(pin: HelmPin, request: TemplateRequest, where: Location) -> str:
    helm = find_helm(pin)
    chart = _chart_folder(request) if request.archive_sha256 else request.archive
    with tempfile.TemporaryDirectory(prefix="krc-helm-") as scratch:
        folder = Path(scratch)
        values = folder / "values.json"  # JSON is YAML: the values go to Helm as data, never as --set strings
        values.write_text(json.dumps(request.values, sort_keys=True), encoding="utf-8")
        command = [str(helm.path), "template", request.release, str(chart),
                   "--namespace", request.namespace, "--kube-version", request.kube_version,
                   "--skip-crds", "--values", str(values)]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=TEMPLATE_TIMEOUT_SECONDS,
                                    env=helm_environment(folder), cwd=folder, check=False)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise KrcError(f"helm template failed to run ({err}); check the Helm binary", where) from None
    if result.returncode != 0:
        message = " ".join(result.stderr.split())[:600] or "no message"
        raise KrcError(f"helm template of {request.archive.name} failed: {message}; fix operator.values", where)
    return result.stdout


def template_chart(pin: HelmPin, request: TemplateRequest, where: Location) -> list[dict[str, Any]]:
    """The chart's objects in Helm's order (Helm sorts by kind, as it installs)."""
    key = request.cache_key(pin.version)
    try:
        text = _cache_file(key).read_text(encoding="utf-8")
    except OSError:
        text = _run_helm(pin, request, where)
        _store(key, text)
    documents = yamlio.load_all(text, f"helm template {request.archive.name}")
    objects = [d for d in documents if d is not None]
    for doc in objects:
        if not isinstance(doc, dict) or not doc.get("kind"):
            raise KrcError(f"helm template of {request.archive.name} printed a document that is not an object",
                           where)
    return objects
