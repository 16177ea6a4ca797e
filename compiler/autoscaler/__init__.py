"""The autoscaler's own view: Ray's KubeRay autoscaling-config generator run over every RayCluster spec.

A stage: it works on the documents of compiled environments (or manifests) and answers one `AutoscalerView`
per batch; the generator itself runs in the isolated environment of the batch's Ray version (`generators`), one
process per Ray version for all batches together, with per-cluster answers cached (`run`).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..k8s.ray_cluster_specs import autoscaled, cluster_specs
from ..rules.support.autoscaler_view import AutoscalerView, GeneratedConfig, SpecKey, spec_key
from .generators import Generator, find_generator, install_hint, valid_ray_version
from .run import end_idle_generators, generate, generator_input, start_ahead


@dataclass(frozen=True)
class Batch:
    """The documents of one environment (or manifest set) and the Ray version whose generator judges them."""

    ray_version: str
    documents: tuple[dict[str, Any], ...]


def _specs(documents: Iterable[dict[str, Any]], autoscaled_only: bool) -> list[tuple[SpecKey, dict[str, Any]]]:
    found = []
    for document in documents:
        for path, spec in cluster_specs(document):
            if autoscaled(spec) or not autoscaled_only:
                found.append((spec_key(document, path), generator_input(document, spec)))
    return found


def autoscaler_views(project_root: Path, batches: Sequence[Batch], autoscaled_only: bool = False) \
        -> list[AutoscalerView]:
    """One view per batch, in order. A batch whose Ray version has no installed generator gets a view that says
    so (and how to install it) instead of answers: another version's generator is never used. `autoscaled_only`:
    answers for the clusters an autoscaler reads only (what the lint rules ask the view about), not also for
    every other cluster's capacity as Ray would count it (what `krc autoscaler` and the review show)."""
    generators: dict[str, Generator | str] = {}
    wanted: dict[str, dict[str, dict[str, Any]]] = {}  # version -> cluster id -> RayCluster
    per_batch: list[list[tuple[SpecKey, str]]] = []
    for number, batch in enumerate(batches):
        found = generators.setdefault(batch.ray_version, find_generator(project_root, batch.ray_version))
        ids = []
        for key, cluster in _specs(batch.documents, autoscaled_only):
            cid = f"{number}:{key[0]}:{'.'.join(key[1])}"
            ids.append((key, cid))
            if isinstance(found, Generator):
                wanted.setdefault(batch.ray_version, {})[cid] = cluster
        per_batch.append(ids)
    answers: dict[str, GeneratedConfig] = {}
    for version, clusters in sorted(wanted.items()):
        generator = generators[version]
        assert isinstance(generator, Generator)
        answers.update(generate(generator, clusters))
    views = []
    for batch, ids in zip(batches, per_batch, strict=True):
        found = generators[batch.ray_version]
        if isinstance(found, str):
            views.append(AutoscalerView({}, batch.ray_version, found))
        else:
            views.append(AutoscalerView({key: answers[cid] for key, cid in ids}, batch.ray_version))
    return views


def start_generators_ahead(project_root: Path, ray_versions: Iterable[str]) -> None:
    """Start the installed generators of these Ray versions now, in a run of several processes (run.start_ahead):
    the first batches' questions to them no longer wait for Ray to import."""
    for version in sorted(set(ray_versions)):
        found = find_generator(project_root, version)
        if isinstance(found, Generator):
            start_ahead(found)


__all__ = ["AutoscalerView", "Batch", "GeneratedConfig", "Generator", "autoscaler_views", "end_idle_generators",
           "find_generator", "install_hint", "start_generators_ahead", "valid_ray_version"]
