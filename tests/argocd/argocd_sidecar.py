"""Running krc the way Argo CD's sidecar does: a fresh copy of the repository (files 0644, directories 0755),
the request's variables in the environment, the app path as working directory.

`run_sidecar` starts krc as a subprocess, exactly as the sidecar does (the true sidecar tests use it); `run` calls
the same command line in this process, with the same variables and working directory, where a process of its
own adds nothing to what a test checks but a second of start-up."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from compiler.cli import main

KRC = Path(sys.executable).parent / "krc"
PROJECT_PARTS = ("environments", "templates", "vendor", "deploy", "policies")


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: bytes
    stderr: str


def sidecar_copy(project_root: Path, destination: Path) -> Path:
    """What the CMP server unpacks: the repository's files without execute bits."""
    for part in PROJECT_PARTS:
        if (project_root / part).exists():
            shutil.copytree(project_root / part, destination / part)
    for path in [destination, *destination.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return destination


def tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + oct(path.stat().st_mode).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def argocd_environ(cache_dir: Path, parameters: list[dict] | None, env: dict[str, str] | None = None) -> dict:
    """The variables the repo-server sends with a request (plus the sidecar's own PATH and a cache dir), spelled
    as Argo CD v3.5.1 spells them (reposerver/repository newEnv, ApplicationSourcePluginParameters.Environ);
    tests/argocd/harness sends the real ones through the real server."""
    environ = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cache_dir / "home"),  # nothing may be written there either: the cache goes to KRC_CACHE_DIR
        "KRC_CACHE_DIR": str(cache_dir / "krc"),
        "ARGOCD_APP_NAME": "krc-test-workloads",
        "ARGOCD_APP_NAMESPACE": "ray-demo",
        "ARGOCD_APP_PROJECT_NAME": "default",
        "ARGOCD_APP_REVISION": "0123456789abcdef0123456789abcdef01234567",
        "ARGOCD_APP_REVISION_SHORT": "0123456",
        "ARGOCD_APP_REVISION_SHORT_8": "01234567",
        "ARGOCD_APP_SOURCE_PATH": ".",
        "ARGOCD_APP_SOURCE_REPO_URL": "https://github.com/example/ray-gitops.git",
        "ARGOCD_APP_SOURCE_TARGET_REVISION": "main",
        "KUBE_VERSION": "1.33.1",
        "KUBE_API_VERSIONS": "apps/v1,apps/v1/Deployment,ray.io/v1,ray.io/v1/RayCluster,v1,v1/Namespace",
    }
    for entry in parameters or []:
        name = "PARAM_" + re.sub(r"[^A-Z0-9_]", "_", entry["name"].upper())
        if "string" in entry:
            environ[name] = entry["string"]
        for i, value in enumerate(entry.get("array") or []):
            environ[f"{name}_{i}"] = value
    if parameters is not None:  # Go's json.Marshal of each parameter: keys sorted, no spaces
        environ["ARGOCD_APP_PARAMETERS"] = json.dumps(parameters, sort_keys=True, separators=(",", ":"),
                                                      ensure_ascii=False)
    environ.update(env or {})
    return environ


def start(app_dir: Path, environ: dict, *args: str) -> subprocess.Popen:
    return subprocess.Popen([str(KRC), "argocd", *(args or ("generate",))], cwd=app_dir, env=environ,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(process: subprocess.Popen) -> Result:
    stdout, stderr = process.communicate(timeout=120)
    return Result(process.returncode, stdout, stderr.decode("utf-8", "replace"))


def run_sidecar(app_dir: Path, environ: dict, *args: str) -> Result:
    return finish(start(app_dir, environ, *args))


# Variables a request may carry: any the test does not give are unset for the in-process run.
_REQUEST_PREFIXES = ("ARGOCD_", "PARAM_", "KRC_", "KUBE_")


def run(app_dir: Path, environ: dict, *args: str) -> Result:
    """The command in this process: same arguments, variables (only these) and working directory."""
    unset: dict[str, str | None] = {k: None for k in os.environ if k.startswith(_REQUEST_PREFIXES)}
    previous = Path.cwd()
    os.chdir(app_dir)
    try:
        result = CliRunner().invoke(main, ["argocd", *(args or ("generate",))], env={**unset, **environ})
    finally:
        os.chdir(previous)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Result(result.exit_code, result.stdout_bytes, result.stderr)


def parameters(environment: str, **more: str) -> list[dict]:
    return [{"name": "environment", "string": environment}] + [{"name": k, "string": v} for k, v in more.items()]
