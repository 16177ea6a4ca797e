"""Fixtures for the Argo CD plugin tests: a sidecar-style copy of the repository and Argo CD's CRDs."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from argocd_sidecar import sidecar_copy

from compiler.project.paths import Project
from compiler.validation import SchemaSet, load_crds_from_path


@pytest.fixture
def app_dir(project: Project, tmp_path: Path) -> Path:
    """The app path inside a fresh copy of the repository, as the CMP server unpacks it."""
    return sidecar_copy(project.root, tmp_path / "cmp" / "repo")


@pytest.fixture
def cache_dir(tmp_path: Path, parsed_charts_cache: Path) -> Path:
    """The sidecar's HOME (which must stay empty) and its krc cache, warm as a running sidecar's is after its first
    requests (every vendored chart's CRDs parsed)."""
    folder = tmp_path / "sidecar-cache"
    (folder / "home").mkdir(parents=True)
    shutil.copytree(parsed_charts_cache, folder / "krc")
    return folder


@pytest.fixture(scope="session")
def argocd_crds_dir(shared_dir: Path) -> Path:
    return shared_dir / "argocd" / "crds"


@pytest.fixture(scope="session")
def argocd_schemas(argocd_crds_dir: Path) -> SchemaSet:
    schemas = SchemaSet.from_crds(load_crds_from_path(argocd_crds_dir))
    schemas.compile_all()
    return schemas
