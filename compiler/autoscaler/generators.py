"""Where the generator of each Ray version lives: a virtual environment of its own with exactly that `ray`.

`make ray-generators` (a prerequisite of `make render` and `make test`) creates `.venv-ray/<version>/` for every
Ray version the environments name; `KRC_RAY_ENVS` points elsewhere (a shared folder of such environments). krc
never imports Ray and never falls back on another version's generator: the autoscaler of Ray X runs X's.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..settings import variables

RAY_ENVS_DIR = ".venv-ray"
# a release version as PyPI spells it (2.58.0, 2.9.0rc1); it becomes a folder name, so nothing else is accepted
_RAY_VERSION = re.compile(r"^\d{1,3}\.\d{1,3}\.\d{1,3}(?:(?:a|b|rc)\d{1,3})?$")


@dataclass(frozen=True)
class Generator:
    ray_version: str
    python: Path  # the environment's interpreter


def ray_envs_dir(project_root: Path) -> Path:
    explicit = variables.value("KRC_RAY_ENVS")
    return Path(explicit) if explicit else project_root / RAY_ENVS_DIR


def valid_ray_version(version: str) -> bool:
    return bool(_RAY_VERSION.fullmatch(version))


def install_hint(version: str, project_root: Path) -> str:
    shown = RAY_ENVS_DIR if not variables.is_set("KRC_RAY_ENVS") else str(ray_envs_dir(project_root))
    return (f"run 'make ray-generators' (it creates {shown}/{version} with pip install ray=={version}), or point "
            "KRC_RAY_ENVS at a folder holding one virtual environment per Ray version")


def installed_generators(project_root: Path) -> tuple[str, tuple[str, ...]]:
    """Where generators are looked for and the Ray versions installed there: what a cached review that shows
    Ray's view (or says it is unavailable) depends on besides the clusters themselves."""
    folder = ray_envs_dir(project_root)
    try:
        versions = sorted(entry.name for entry in os.scandir(folder)
                          if valid_ray_version(entry.name) and (Path(entry.path) / "bin" / "python").exists())
    except OSError:
        versions = []
    return str(folder.resolve()), tuple(versions)


def find_generator(project_root: Path, version: str) -> Generator | str:
    """The generator of exactly `version`, or why there is none and how to get it."""
    if not valid_ray_version(version):
        return (f"ray.version '{version}' is not a Ray release version (like 2.58.0), so no autoscaler config "
                "generator can be chosen for it; set ray.version to the Ray release the images run")
    python = ray_envs_dir(project_root) / version / "bin" / "python"
    if not python.exists():
        return (f"the autoscaler config generator of Ray {version} is not installed; "
                f"{install_hint(version, project_root)}")
    return Generator(version, python)
