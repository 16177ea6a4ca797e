"""KubeRay's own code, one build per KubeRay version (engine/kuberay/vX.Y.Z, engine/kuberay/README.md): what its
validators and webhooks say of a defaulted custom resource, and the Pods and Services its controllers create.

One process per KubeRay version per krc process (per run, when the run compiles in several processes: the
first to ask starts it, the others connect to it, shared_helper), started when first asked and ended with krc.
It speaks the
engine's protocol (channel.py) on two pipes of its own; it answers one request at a time, each with the feature
gates and environment of the operator the request describes, so nothing of one request leaks into the next.
An answer depends on nothing else, so each object's is kept in krc's cache: the whole answer (ANSWERS) for
`krc diff` and `krc show --pods`, and the verdict alone (VERDICTS, the `validate` op: no Pods or Services built)
for the lint rule kuberay/validator, which asks about every object a lint compiles and reads no more.
"""
from __future__ import annotations

import atexit
import os
import threading
from pathlib import Path
from typing import Any

from ..cache import CacheKind, cache_key, canonical_text
from ..diagnostics.problems import KrcError, Location
from ..settings import limits
from . import client, shared_helper
from .binary import binary_for, build_identity, built_versions
from .channel import Answer, EngineEnded
from .child import ChildProcess
from .helper_process import HelperFailed, HelperTimeout

TIMEOUT_SECONDS = 120.0


def require_build(version: str, where: Location | None = None) -> Path:
    """The build of KubeRay `version`; KrcError (exit 2) saying how to get one when there is none."""
    path = binary_for(version)
    if path.is_file() and os.access(path, os.X_OK):
        return path
    if version in built_versions():
        raise KrcError(f"KubeRay {version}'s code is not built; run 'make kuberay' in the krc checkout "
                       "(Go 1.26; the first build takes about 4 minutes)", where)
    known = ", ".join(built_versions()) or "none"
    raise KrcError(f"krc has no build of KubeRay {version}'s code (it has: {known}); in the krc checkout, add "
                   f"engine/kuberay/v{version} as engine/kuberay/README.md says, then run 'make kuberay'", where)


def _environment() -> dict[str, str]:
    """A build's whole environment: nothing of krc's (what KubeRay's code reads of it comes from the operator,
    per request) but its memory limit."""
    return {"GOMEMLIMIT": f"{limits.ENGINE_MEMORY_MB.value}MiB", "HOME": "/nonexistent"}


class KubeRayProcess(ChildProcess):
    """One KubeRay build running: its pipes and its log (what Go or KubeRay print)."""

    def __init__(self, binary: Path) -> None:
        super().__init__(str(binary), [], _environment(), lambda err: KrcError(
            f"{binary} could not start ({err.strerror or err}); rebuild it with 'make kuberay'"))

    def why_ended(self) -> EngineEnded:
        return EngineEnded(f"KubeRay's build ended (exit {self.exit_code()}): {self.log_tail()}")


_PROCESSES: dict[str, KubeRayProcess] = {}
_LOCK = threading.Lock()


def _process(version: str, where: Location | None) -> KubeRayProcess:
    with _LOCK:
        running = _PROCESSES.get(version)
        if running is None or running.pid != os.getpid() or not running.alive():
            if running is not None and running.pid == os.getpid():
                running.kill()
            running = _PROCESSES[version] = KubeRayProcess(require_build(version, where))
        return running


@atexit.register
def close_all() -> None:
    with _LOCK:
        running = list(_PROCESSES.values())
        _PROCESSES.clear()
    for process in running:
        if process.pid == os.getpid():
            process.close()


def operator_config(chart_objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The operator as the chart configures it: the args and literal env of the kuberay-operator Deployment's
    first container (an env var from a reference has no value krc knows, and KubeRay's builders read none)."""
    for document in chart_objects:
        if document.get("kind") != "Deployment":
            continue
        containers = (((document.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers")
        if not isinstance(containers, list) or not containers or not isinstance(containers[0], dict):
            continue
        container = containers[0]
        if "kuberay" not in str(container.get("image", "")) and "kuberay" not in str(container.get("name", "")):
            continue
        args = [str(a) for a in [*(container.get("command") or [])[1:], *(container.get("args") or [])]]
        env = [{"name": str(e["name"]), "value": str(e["value"])} for e in container.get("env") or []
               if isinstance(e, dict) and "name" in e and isinstance(e.get("value"), str)]
        return {"args": args, "env": env}
    return {"args": [], "env": []}


class OperatorRefused(KrcError):
    """The operator configuration the chart gives is one KubeRay's operator would not start with (an unknown
    feature gate): nothing is built; the rule about that configuration reports it."""


# KubeRay's answer for one object, by the build, the operator configuration and the defaulted object; bump the
# version when what the builds answer changes shape
ANSWERS = CacheKind("kuberay", 1)
# Its verdict alone (the `validate` op: refusals and skipped, no Pods or Services), under the same key
VERDICTS = CacheKind("kuberay-verdict", 1)


def build(version: str, operator: dict[str, Any], documents: list[dict[str, Any]],
          where: Location | None = None) -> list[dict[str, Any]]:
    """KubeRay `version`'s answer for each defaulted custom resource, in order: {refusals, skipped?, clusters,
    error?}, from the cache or the build for the rest. KrcError when there is no build or no answer in time;
    OperatorRefused when the operator configuration is one the operator refuses (never kept)."""
    return _answers("build", ANSWERS, version, operator, documents, where)


def verdicts(version: str, operator: dict[str, Any], documents: list[dict[str, Any]],
             where: Location | None = None) -> list[dict[str, Any]]:
    """What KubeRay `version` says of each defaulted custom resource, as `build` answers it but without the Pods
    and Services it would build: {refusals, skipped?} (`krc lint` reads no more; the built objects were most of
    each answer's bytes to make, read and keep). A full answer in the cache (a review's) is used as well."""
    return _answers("validate", VERDICTS, version, operator, documents, where, also=ANSWERS)


def _answers(op: str, kind: CacheKind, version: str, operator: dict[str, Any], documents: list[dict[str, Any]],
             where: Location | None, also: CacheKind | None = None) -> list[dict[str, Any]]:
    """`op`'s answer for each document, kept under `kind` (or found under `also`, a fuller answer)."""
    if not documents:
        return []
    shared = (build_identity(version), canonical_text(operator))
    keys = [cache_key(*shared, canonical_text(document)) for document in documents]
    found = [_kept(key, kind, also) for key in keys]
    missing = [i for i, answer in enumerate(found) if not isinstance(answer, dict)]
    if missing:
        answers = _ask(op, version, operator, [documents[i] for i in missing], where)
        for i, answer in zip(missing, answers, strict=True):
            found[i] = answer
            kind.write_json(keys[i], answer)
    return found


def _kept(key: str, *kinds: CacheKind | None) -> Any:
    """The first verified entry under `key` of these kinds, or None."""
    for kind in kinds:
        answer = kind.read_json(key) if kind is not None else None
        if isinstance(answer, dict):
            return answer
    return None


def _answer(op: str, version: str, args: dict[str, Any], where: Location | None) -> Answer:
    """The build's answer to one `build` or `validate` request: from the run's shared build when the run compiles
    in several processes (shared_helper: one build, not one per process), else from this process's own."""
    slow = KrcError(f"KubeRay {version}'s builders did not answer within {TIMEOUT_SECONDS:g} s; run again with "
                    "fewer environments", where)
    folder = client.run_folder()
    if folder is not None:
        binary = str(require_build(version, where))
        try:
            raw = shared_helper.ask(folder, f"kuberay-v{version}", [binary], _environment(),
                                    {"id": 1, "op": op, "args": args}, TIMEOUT_SECONDS)
        except HelperTimeout:
            raise slow from None
        except HelperFailed as failed:
            raise EngineEnded(f"KubeRay's build ended: {failed.last_line}") from None
        error = raw.get("error")
        return Answer(raw.get("result"), None if error is None else str(error))
    process = _process(version, where)
    future = process.submit(op, args)
    try:
        return future.result(timeout=TIMEOUT_SECONDS)
    except TimeoutError:
        process.kill()
        raise slow from None


def _ask(op: str, version: str, operator: dict[str, Any], documents: list[dict[str, Any]],
         where: Location | None) -> list[dict[str, Any]]:
    answer = _answer(op, version, {"operator": operator, "objects": documents}, where)
    if answer.error is not None and answer.error.startswith("internal error in "):
        raise EngineEnded(f"KubeRay {version}'s build failed: {answer.error}")  # a panic in KubeRay's code: exit 3
    if answer.error is not None:
        raise OperatorRefused(f"KubeRay {version}: {answer.error}", where)
    results = list(answer.result["results"])
    if len(results) != len(documents):
        raise EngineEnded(f"KubeRay {version} answered {len(results)} results for {len(documents)} objects")
    return results
