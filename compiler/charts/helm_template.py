"""`helm template` of a vendored chart through Helm's own SDK in krc's engine: what the operator Application deploys.

The engine (engine/render.go) runs Helm v4.2.1, the Helm Argo CD 3.5.1 bundles, as `helm template <release>
<chart> --namespace <ns> --kube-version <v> --skip-crds` would with the environment's values; the operator
Application deploys this output through the krc plugin (`operator=only`), so review and deployment share one
Helm. The output depends only on the chart archive, the values, release, namespace, Kubernetes version and
Helm's version, so it is cached under that key in krc's cache dir: a warm render starts no engine at all.

A batch of environments submits its charts ahead (`start_ahead`): the engine renders them on its own threads
while this process compiles the environments, and `template_chart` takes each answer when it needs it.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cache import CacheKind, cache_key
from ..diagnostics.problems import KrcError, Location
from ..native import client

# The Helm inside the engine (engine/go.mod; engine/check_versions.sh and the engine tests hold it there)
HELM_VERSION = "v4.2.1"
TEMPLATE_TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class TemplateRequest:
    archive: Path
    archive_sha256: str  # from the lock; the engine renders only an archive with this digest
    release: str
    namespace: str
    kube_version: str  # 1.33
    values: dict[str, Any]

    def cache_key(self) -> str:
        values = json.dumps(self.values, sort_keys=True, separators=(",", ":"))
        return cache_key(HELM_VERSION, self.archive_sha256, self.release, self.namespace, self.kube_version, values)


# Helm's text and its objects as the engine answered them (JSON: read back without a YAML parse), by
# TemplateRequest.cache_key; verified entries: what another user or branch left there is never believed.
CACHE = CacheKind("helm-template", 1)


# Renders submitted ahead and not taken yet, by (process, cache key): a worker process has an engine of its own
_AHEAD: dict[tuple[int, str], client.Pending] = {}


def _what(request: TemplateRequest) -> str:
    return f"helm template of {request.archive.name}"


def _submit(request: TemplateRequest, where: Location, *, with_archive: bool = False) -> client.Pending:
    args: dict[str, Any] = {"archiveSha256": request.archive_sha256, "release": request.release,
                            "namespace": request.namespace, "kubeVersion": request.kube_version,
                            "values": request.values}
    # sent once, then named by digest (client.remember)
    if with_archive or client.engine_name("archive", request.archive_sha256) is None:
        try:
            data = request.archive.read_bytes()
        except OSError as err:
            raise KrcError(f"cannot read {request.archive} ({err.strerror or err}); run 'krc vendor'", where) from None
        if hashlib.sha256(data).hexdigest() != request.archive_sha256:  # the engine checks it too
            raise KrcError(f"{request.archive} does not match its digest in the chart lock; run 'krc vendor' to "
                           "download it again", where)
        args["archive"] = base64.b64encode(data).decode("ascii")
        client.remember("archive", request.archive_sha256, request.archive_sha256)
    return client.Pending("render", args, _what(request), TEMPLATE_TIMEOUT_SECONDS)


def _answer(request: TemplateRequest, pending: client.Pending, where: Location) -> dict[str, Any]:
    answer = pending.answer()
    if isinstance(answer.result, dict) and answer.result.get("needArchive"):  # a new engine, or one that forgot it
        answer = _submit(request, where, with_archive=True).answer()
    if answer.error is not None:
        message = " ".join(answer.error.split())[:600]
        raise KrcError(f"{_what(request)} failed: {message}; fix operator.values", where)
    if not _well_formed(answer.result):
        raise client.EngineEnded(f"the engine's render answer holds no manifest: {str(answer.result)[:200]}")
    assert isinstance(answer.result, dict)
    return answer.result


def _well_formed(entry: Any) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("manifest"), str) \
        and isinstance(entry.get("documents"), list)


def start_ahead(requests: Sequence[TemplateRequest]) -> None:
    """Submit the renders the cache lacks, in order; template_chart takes their output. A request krc cannot make
    (an unreadable archive, no engine) is left for template_chart to report."""
    for request in requests:
        key = request.cache_key()
        if (os.getpid(), key) in _AHEAD or CACHE.exists(key):
            continue
        try:
            _AHEAD[os.getpid(), key] = _submit(request, Location(CACHE.name))
        except KrcError:
            return


def template_chart(request: TemplateRequest, where: Location) -> list[dict[str, Any]]:
    """The chart's objects in Helm's order (Helm sorts by kind, as it installs)."""
    key = request.cache_key()
    pending = _AHEAD.pop((os.getpid(), key), None)
    entry: Any = None
    if pending is None:
        entry = CACHE.read_json(key)
        if not _well_formed(entry):
            entry, pending = None, _submit(request, where)
    if entry is None:
        assert pending is not None
        entry = _answer(request, pending, where)
        CACHE.write_json(key, entry)
    objects = [d for d in entry["documents"] if d is not None]
    for doc in objects:
        if not isinstance(doc, dict) or not doc.get("kind"):
            raise KrcError(f"{_what(request)} printed a document that is not an object", where)
    return objects
