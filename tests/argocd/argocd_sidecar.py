"""Running krc the way Argo CD's sidecar does: a fresh copy of the repository (files 0644, directories 0755),
the request's variables in the environment, the app path as working directory, krc as a subprocess."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

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
    """The variables the repo-server sends with a request (plus the sidecar's own PATH and a cache dir)."""
    environ = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cache_dir / "home"),  # nothing may be written there either: the cache goes to KRC_CACHE_DIR
        "KRC_CACHE_DIR": str(cache_dir / "krc"),
        "ARGOCD_APP_NAME": "krc-test-workloads",
        "ARGOCD_APP_NAMESPACE": "ray-demo",
        "ARGOCD_APP_PROJECT_NAME": "default",
        "ARGOCD_APP_REVISION": "0123456789abcdef0123456789abcdef01234567",
        "ARGOCD_APP_REVISION_SHORT": "0123456",
        "ARGOCD_APP_SOURCE_PATH": ".",
        "ARGOCD_APP_SOURCE_REPO_URL": "https://github.com/example/ray-gitops.git",
        "ARGOCD_APP_SOURCE_TARGET_REVISION": "main",
        "KUBE_VERSION": "1.33.1",
        "KUBE_API_VERSIONS": "apps/v1,apps/v1/Deployment,ray.io/v1,ray.io/v1/RayCluster,v1,v1/Namespace",
    }
    for entry in parameters or []:
        if "string" in entry:
            environ["PARAM_" + entry["name"].upper().replace("-", "_")] = entry["string"]
    if parameters is not None:
        environ["ARGOCD_APP_PARAMETERS"] = json.dumps(parameters)
    environ.update(env or {})
    return environ


def start(app_dir: Path, environ: dict, *args: str) -> subprocess.Popen:
    return subprocess.Popen([str(KRC), "argocd", *(args or ("generate",))], cwd=app_dir, env=environ,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(process: subprocess.Popen) -> Result:
    stdout, stderr = process.communicate(timeout=120)
    return Result(process.returncode, stdout, stderr.decode("utf-8", "replace"))


def run(app_dir: Path, environ: dict, *args: str) -> Result:
    return finish(start(app_dir, environ, *args))


def parameters(environment: str, **more: str) -> list[dict]:
    return [{"name": "environment", "string": environment}] + [{"name": k, "string": v} for k, v in more.items()]
