"""Argo CD objects (Application, ApplicationSet, AppProject) checked against the user's Argo CD CRDs.

Argo CD's CRDs are not in any KubeRay chart, so users name them: the environment field `argocd.crds` (a path
relative to the project root, so it also works inside the plugin's copy of the repository) or an explicit path.
The engine judges them as for KubeRay objects: the API server's own validation (compiler.validation), one
request per CRD for all of a run's objects of that kind.
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..diagnostics.problems import KrcError, Location, Problem
from ..environment.model import Environment
from ..k8s.objects import RenderedObject
from ..project.paths import Project
from ..validation import SchemaSet, load_crds_from_path
from .selection import ARGOCD_GROUP, is_argocd_object

CRDS_FIELD = ("argocd", "crds")


@functools.lru_cache(maxsize=8)
def _schema_set(path: str) -> SchemaSet:
    schemas = SchemaSet.from_crds(load_crds_from_path(path))
    if ARGOCD_GROUP not in schemas.groups:
        raise KrcError(f"{path} holds no {ARGOCD_GROUP} CRDs; point at Argo CD's CRDs (application-crd.yaml, "
                       "applicationset-crd.yaml, appproject-crd.yaml)")
    return schemas


def argocd_schemas(path: Path | str) -> SchemaSet:
    """Argo CD's CRDs from a file or directory, compiled once per process."""
    return _schema_set(str(Path(path).resolve()))


def crds_path(project: Project, env: Environment, override: str | None = None) -> Path | None:
    """The Argo CD CRDs to check against: an explicit path (relative to the cwd), else `argocd.crds` of the
    environment (relative to the project root), else none."""
    if override:
        return Path(override)
    configured = env.get(CRDS_FIELD)
    if not configured:
        return None
    path = project.root / str(configured)
    if not project.is_inside(path):  # environment files are data: they may not make krc read elsewhere
        raise KrcError(f"argocd.crds names {configured}, which leads outside the project; commit Argo CD's CRDs "
                       "inside the project and name them relative to its root", env.location_of(CRDS_FIELD))
    if not path.exists():
        raise KrcError(f"argocd.crds names {configured}, which does not exist under the project root; commit "
                       "Argo CD's CRDs there or fix the path", env.location_of(CRDS_FIELD))
    return path


def validate_documents(documents: Iterable[dict[str, Any]], schemas: SchemaSet,
                       where: Location | Sequence[Location | None] | None = None) -> list[Problem]:
    """Problems of every Argo CD object among `documents` (one engine request per CRD); other objects are not
    this check's business. `where` places problems without a position: one location, or one per document."""
    given = list(documents)
    places = list(where) if isinstance(where, Sequence) else [where] * len(given)
    chosen = [i for i, document in enumerate(given) if is_argocd_object(document)]
    problems: list[Problem] = []
    for i, result in zip(chosen, schemas.validate_many([given[i] for i in chosen]), strict=True):
        place = places[i]
        problems.extend(p if p.location or place is None else dataclasses.replace(p, location=place)
                        for p in result.problems)
    return problems


def environment_problems(project: Project, env: Environment, objects: tuple[RenderedObject, ...],
                         override: str | None = None) -> list[Problem]:
    """The environment's Argo CD objects against its Argo CD CRDs (nothing when no CRDs are named)."""
    path = crds_path(project, env, override)
    if path is None:
        return []
    return validate_documents([obj.document for obj in objects], argocd_schemas(path),
                              [obj.location for obj in objects])
