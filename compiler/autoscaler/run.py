"""Running the generator: one process per Ray version, kept up for every batch, answers cached on disk.

Each cluster spec goes to the generator as the RayCluster the autoscaler would read from the API server (the
spec as linted: CRD defaults applied). Answers are cached per cluster in krc's cache folder, keyed by the Ray
version, the runner script and the cluster's canonical JSON, so a warm run starts no process at all.
"""
from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..cache import CacheKind, cache_key
from ..diagnostics.problems import KrcError
from ..k8s.crds import canonical_json
from ..k8s.ray_cluster_specs import autoscaled
from ..native import client, helper_process, shared_helper
from ..rules.support.autoscaler_view import GeneratedConfig, config_from_answer
from .generators import Generator

RUNNER = Path(__file__).with_name("generator_runner.py")
TIMEOUT_SECONDS = 600


def generator_input(document: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """The RayCluster the autoscaler reads: this spec under the owning object's name and namespace.

    A cluster without worker groups has no `workerGroupSpecs`; the generator (like the autoscaler) fails on
    that, which is what an autoscaled cluster would do. Without autoscaling no autoscaler reads it, so Ray's view
    of its capacity is taken with an empty list.
    """
    found = document.get("metadata")
    meta: dict[str, Any] = found if isinstance(found, dict) else {}
    if "workerGroupSpecs" not in spec and not autoscaled(spec):
        spec = {**spec, "workerGroupSpecs": []}
    return {"apiVersion": "ray.io/v1", "kind": "RayCluster",
            "metadata": {"name": str(meta.get("name") or meta.get("generateName") or "cluster"),
                         "namespace": str(meta.get("namespace") or "default")},
            "spec": spec}


def _runner_digest() -> str:
    return hashlib.sha256(RUNNER.read_bytes()).hexdigest()


# The generator's answers, by cluster (its Ray version and the runner's digest are in the key).
CACHE = CacheKind("autoscaler", 1)


def _read_cached(key: str) -> dict[str, Any] | None:
    answer = CACHE.read_json(key)  # verified, or a miss
    return answer if isinstance(answer, dict) else None


def _command(generator: Generator) -> tuple[list[str], dict[str, str]]:
    """How the generator of this Ray version is run: its command line and its whole environment."""
    return ([str(generator.python), "-I", str(RUNNER)],
            helper_process.helper_environment(RAY_USAGE_STATS_ENABLED="0"))


def start_ahead(generator: Generator) -> None:
    """In a run of several processes, start this Ray version's shared generator now, in the background: importing
    Ray takes about a second, which the run's first questions to it waited for (both processes at once, early in
    a cold `krc lint`). The first question waits for the start still under way; a generator that cannot start is
    left to it."""
    folder = client.run_folder()
    if folder is None:
        return
    argv, env = _command(generator)
    threading.Thread(target=shared_helper.start, args=(folder, f"ray-{generator.ray_version}", argv, env,
                                                      TIMEOUT_SECONDS), name="krc-generator-start", daemon=True).start()


def _run(generator: Generator, clusters: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The generator's answers: one request to the helper process of this Ray version, started once per krc
    process (importing Ray costs about 0.9 s) and kept up for the next request (helper_process), or once per
    run when the run compiles in several processes (shared_helper)."""
    argv, env = _command(generator)
    what = f"the autoscaler config generator of Ray {generator.ray_version} ({generator.python})"
    folder = client.run_folder()
    try:
        if folder is not None:  # one generator for the run's processes
            answer = shared_helper.ask(folder, f"ray-{generator.ray_version}", argv, env, {"clusters": clusters},
                                       TIMEOUT_SECONDS)
        else:
            answer = helper_process.ask(argv, env, {"clusters": clusters}, TIMEOUT_SECONDS)
    except OSError as err:
        raise KrcError(f"could not start {what}: {err.strerror}; reinstall it with 'make ray-generators'") from None
    except helper_process.HelperTimeout:
        raise KrcError(f"{what} did not finish within {TIMEOUT_SECONDS} s; run it again with fewer "
                       "environments") from None
    except helper_process.HelperFailed as failed:
        raise KrcError(f"{what} failed ({failed.last_line}); reinstall it with 'make ray-generators'") from None
    if not isinstance(answer.get("results"), dict):
        raise KrcError(f"{what} failed (no results in its answer); reinstall it with 'make ray-generators'")
    if answer.get("rayVersion") != generator.ray_version:
        raise KrcError(f"{generator.python} runs Ray {answer.get('rayVersion')}, not {generator.ray_version}; "
                       "recreate that environment with 'make ray-generators'")
    results: dict[str, Any] = answer["results"]
    return results


def end_idle_generators() -> None:
    """End this process's generators waiting idle for a next request (every Ray version's): for a command that has
    asked them all it will ask, before it starts work that needs the memory (krc lint's CUE runs at the end).
    Unless the caller set a longer idle time than the default: a long-lived caller (a test session) keeps its
    generators up on purpose, for its next commands."""
    if helper_process.idle_seconds() > helper_process.DEFAULT_IDLE_SECONDS:
        return
    runner = str(RUNNER)
    helper_process.POOL.end_idle(lambda argv: runner in argv)
    shared_helper.end(lambda name: name.startswith("ray-"))


def generate(generator: Generator, clusters: Mapping[str, dict[str, Any]]) -> dict[str, GeneratedConfig]:
    """The generator's answer for every cluster (id -> RayCluster), from the cache or one process for the rest."""
    runner = _runner_digest()
    keys = {cid: cache_key(generator.ray_version, runner, canonical_json(c)) for cid, c in clusters.items()}
    answers: dict[str, dict[str, Any]] = {}
    for cid, key in keys.items():
        cached = _read_cached(key)
        if cached is not None:
            answers[cid] = cached
    missing = {keys[cid]: clusters[cid] for cid in clusters if cid not in answers}
    if missing:
        results = _run(generator, missing)
        for cid, key in keys.items():
            if cid in answers:
                continue
            answer = results.get(key)
            if not isinstance(answer, dict):
                raise KrcError(f"the Ray {generator.ray_version} generator gave no answer for a cluster; "
                               "reinstall it with 'make ray-generators'")
            answers[cid] = answer
            CACHE.write_json(key, answer)
    return {cid: config_from_answer(answer, generator.ray_version) for cid, answer in answers.items()}
