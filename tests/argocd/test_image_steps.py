"""The sidecar image's build steps (deploy/argocd/image-steps.sh, run by its Dockerfile), run here: there is no
Docker daemon to build the image, so its steps run on this machine instead. The wheel is built from a copy of
the sources with the engine compiled in by setup.py, installed into a scratch virtual environment, and the
installed krc, run from outside any checkout, finds the engine inside its package."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from project_support import REPO_ROOT

STEPS = REPO_ROOT / "deploy" / "argocd" / "image-steps.sh"


def test_the_image_steps_build_a_wheel_whose_krc_runs_its_own_engine(tmp_path: Path):
    source = tmp_path / "krc"  # (setuptools mistakes a source folder named src for a src layout's)
    source.mkdir()
    for part in ("pyproject.toml", "setup.py", "MANIFEST.in"):
        shutil.copy2(REPO_ROOT / part, source / part)
    shutil.copytree(REPO_ROOT / "compiler", source / "compiler", ignore=shutil.ignore_patterns("__pycache__", "bin"))
    shutil.copytree(REPO_ROOT / "engine", source / "engine", ignore=shutil.ignore_patterns("bin"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {**os.environ, "PIP": str(venv / "bin" / "pip"), "KRC": str(venv / "bin" / "krc"), "CGO_ENABLED": "0"}
    env.pop("KRC_ENGINE", None)
    wheels = tmp_path / "wheels"
    subprocess.run(["sh", str(STEPS), "wheel", str(source), str(wheels)], env=env, check=True, capture_output=True)
    [wheel] = sorted(wheels.glob("krc-*.whl"))
    assert wheel.name.endswith("-py3-none-linux_x86_64.whl")  # it holds a native binary: tagged for the platform
    with zipfile.ZipFile(wheel) as archive:
        [engine] = [m for m in archive.infolist() if m.filename.endswith("/compiler/native/bin/krc-engine")]
        assert engine.file_size > 10 << 20 and (engine.external_attr >> 16) & 0o111
    done = subprocess.run(["sh", str(STEPS), "install", str(wheels)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr + done.stdout
    assert f"{venv}/lib/" in done.stdout and "v4.2.1" in done.stdout


def test_the_dockerfile_builds_the_engine_in_a_go_stage_with_those_steps():
    dockerfile = (REPO_ROOT / "deploy" / "argocd" / "Dockerfile").read_text()
    assert "COPY --from=golang:1.26.8 /usr/local/go /usr/local/go" in dockerfile
    assert "RUN sh /build/image-steps.sh wheel /build/krc /wheels" in dockerfile
    assert "RUN sh /tmp/image-steps.sh install /tmp/wheels" in dockerfile
    assert "COPY --from=build /wheels /tmp/wheels" in dockerfile
