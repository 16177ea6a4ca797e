"""Builds krc's engine (engine/, Go) into the package, so an installed krc finds it without the checkout.

`pip install .` runs this: the engine binary goes to compiler/native/bin/krc-engine inside the wheel, which is
then tagged for this platform (it holds a native binary). An editable install (`pip install -e .`, what `make`
uses) builds nothing here: krc then runs the checkout's engine/bin/krc-engine, which `make engine` keeps current.
Everything else about the package is in pyproject.toml.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py

ENGINE_SOURCE = Path(__file__).resolve().parent / "engine"


class BuildWithEngine(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        go = shutil.which("go")
        if go is None:
            raise SystemExit("krc needs Go 1.26 to build its engine (https://go.dev/dl/); install it, then run "
                             "pip install again")
        target = Path(self.build_lib).resolve() / "compiler" / "native" / "bin" / "krc-engine"
        target.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "CGO_ENABLED": os.environ.get("CGO_ENABLED", "0")}
        subprocess.run([go, "build", "-trimpath", "-o", str(target), "."], cwd=ENGINE_SOURCE, env=env, check=True)


class PlatformWheel(bdist_wheel):
    def finalize_options(self) -> None:
        super().finalize_options()
        self.root_is_pure = False  # the engine is a native binary

    def get_tag(self) -> tuple[str, str, str]:
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(cmdclass={"build_py": BuildWithEngine, "bdist_wheel": PlatformWheel})
