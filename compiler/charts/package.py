"""Reading a packaged chart (.tgz): its metadata, default values, templates and CRDs."""
from __future__ import annotations

import functools
import hashlib
import io
import tarfile
import threading
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import jsontext
from ..cache import CacheKind
from ..cache.one_writer import one_at_a_time
from ..diagnostics.problems import KrcError
from ..documents import yamlio
from ..k8s.crds import canonical_json
from ..settings import limits
from . import chart_texts


class ShippedFiles:
    """A chart's crds/ files as shipped, unpacked from the archive's bytes (held: a few hundred kB) when first
    asked for, then held. A command that never writes rendered/ (lint, policy, diff) never holds the megabytes of
    YAML a KubeRay chart's CRDs are in every process."""

    def __init__(self, archive: bytes, origin: str, members: Sequence[str]) -> None:
        """`members`: the archive's CRD files (the names _chart_crds selects), the only ones ever held."""
        self._archive = archive
        self._origin = origin
        self._members = frozenset(members)
        self._files: dict[str, bytes] | None = None
        self._lock = threading.Lock()

    def file(self, member: str) -> bytes:
        with self._lock:
            if self._files is None:
                self._files = {name: data for name, data in _members(self._archive, self._origin).items()
                               if name in self._members}
            return self._files[member]


@dataclass(frozen=True)
class Crd:
    """One CustomResourceDefinition as a chart ships it.

    The identifying facts are plain fields; the document itself (megabytes for KubeRay) is parsed from its
    canonical JSON only when a caller needs the schema.
    """

    name: str  # metadata.name, e.g. rayclusters.ray.io
    source: str  # file name inside the chart, e.g. crds/ray.io_rayclusters.yaml
    shipped: ShippedFiles = field(repr=False, compare=False)  # where its file is
    member: str  # the file's name in the archive, e.g. kuberay-operator/crds/ray.io_rayclusters.yaml
    canonical: str  # canonical JSON (sorted keys, compact)
    group: str
    kind: str
    served_versions: tuple[str, ...]
    storage_version: str

    @property
    def shipped_bytes(self) -> bytes:
        """The file exactly as shipped: one object per CRD file in this process, so every environment's rendered/
        copy after the first can be a hard link (shared_files)."""
        return self.shipped.file(self.member)

    @functools.cached_property
    def document(self) -> dict[str, Any]:
        document: dict[str, Any] = jsontext.loads(self.canonical)
        return document

    @functools.cached_property
    def digest(self) -> str:
        return hashlib.sha256(self.canonical.encode("utf-8")).hexdigest()  # = k8s.crds.crd_digest(document)

    def sha256(self) -> str:
        return self.digest

    @classmethod
    def from_document(cls, document: dict[str, Any], source: str, shipped: ShippedFiles, member: str) -> Crd:
        try:
            spec = document["spec"]
            versions = spec["versions"]
            return cls(str(document["metadata"]["name"]), source, shipped, member, canonical_json(document),
                       str(spec["group"]), str(spec["names"]["kind"]),
                       tuple(str(v["name"]) for v in versions if v.get("served")),
                       next((str(v["name"]) for v in versions if v.get("storage")), ""))
        except (KeyError, TypeError) as err:
            raise KrcError(f"{source}: a CustomResourceDefinition lacks {err} (metadata.name, spec.group, "
                           "spec.names.kind and spec.versions are required); fix the CRD") from None

    def facts(self) -> list[Any]:
        """What the parse cache keeps besides the text: everything but the shipped file."""
        return [self.name, self.group, self.kind, list(self.served_versions), self.storage_version, self.canonical]


@dataclass(frozen=True)
class Chart:
    name: str
    version: str
    app_version: str
    values: dict[str, Any]
    templates: tuple[tuple[str, str], ...]  # (path inside templates/, text), sorted
    crds: tuple[Crd, ...]  # sorted by name


def _member_problem(member: tarfile.TarInfo) -> str | None:
    """Why a member has no place in a chart archive: links, devices, absolute or '..' paths."""
    parts = member.name.split("/")
    if member.name.startswith("/") or ".." in parts or "\\" in member.name or "\0" in member.name:
        return f"member '{member.name}' has an absolute or '..' path"
    if not (member.isfile() or member.isdir()):
        return f"member '{member.name}' is a link, device or FIFO"
    return None


def _members(data: bytes, origin: str) -> dict[str, bytes]:
    """The files of a chart archive, read in memory (nothing is extracted to disk), with no traversal, links or
    devices, and a bound on the count and total size of what it expands to (a gzip bomb)."""
    budget, count_limit = limits.ARCHIVE_BYTES.value, limits.ARCHIVE_MEMBERS.value
    members: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for count, member in enumerate(tar, start=1):
                if count > count_limit:
                    raise KrcError(f"{origin}: " + limits.ARCHIVE_MEMBERS.exceeded("its member count"))
                problem = _member_problem(member)
                if problem:
                    raise KrcError(f"{origin} is not a safe chart archive: {problem}; use the published chart")
                budget -= member.size
                if budget < 0:
                    raise KrcError(f"{origin}: " + limits.ARCHIVE_BYTES.exceeded("its expanded size"))
                if member.isfile():
                    handle = tar.extractfile(member)
                    members[member.name] = handle.read() if handle else b""
    except (tarfile.TarError, OSError, EOFError, zlib.error) as err:
        raise KrcError(f"{origin} is not a readable chart archive ({err}); run 'krc vendor' again") from None
    return members


def parse_crd_documents(text: bytes, source: str, shipped: ShippedFiles, member: str) -> list[Crd]:
    crds = []
    for doc in yamlio.load_all(text.decode("utf-8"), source):
        if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
            crds.append(Crd.from_document(doc, source, shipped, member))
    return crds


# The facts of a chart archive's CRDs (see Crd.facts), by the archive's digest, with the chart's folder and the CRD
# files they were read from: a command that needs only the CRDs (a warm `krc argocd generate`) takes them from here
# without unpacking the archive (cached_crds). Bump the version when this layout or Crd.facts changes.
CRD_CACHE = CacheKind("crds", 2)


def _crds_from_cache(data: bytes, origin: str, digest: str,
                     layout: tuple[str, list[str]] | None = None) -> list[Crd] | None:
    """The CRDs as the JSON cache holds their facts; None when absent, not what this krc writes (never believed:
    a served-versions string would otherwise become a tuple of characters) or, given the archive's `layout` (its
    chart folder and CRD files), read from other files."""
    cached = CRD_CACHE.read_json(digest)
    if not isinstance(cached, dict):
        return None
    root, names, per_file = cached.get("root"), cached.get("files"), cached.get("crds")
    if not isinstance(root, str) or not isinstance(names, list) or not isinstance(per_file, list) \
            or len(per_file) != len(names) or not all(isinstance(n, str) and n.startswith(f"{root}/crds/")
                                                      for n in names):
        return None
    if layout is not None and (root, names) != layout:
        return None
    shipped = ShippedFiles(data, origin, names)
    crds: list[Crd] = []
    try:
        for name, documents in zip(names, per_file, strict=True):
            for crd_name, group, kind, served, storage, canonical in documents:
                if not isinstance(served, list) \
                        or not all(isinstance(v, str) for v in (crd_name, group, kind, storage, canonical, *served)):
                    return None
                crds.append(Crd(crd_name, name[len(root) + 1:], shipped, name, canonical, group, kind, tuple(served),
                                storage))
    except (ValueError, TypeError):  # not a list of six facts
        return None
    return crds


def _chart_crds(root: str, files: Sequence[str], members: dict[str, bytes] | None, data: bytes, origin: str,
                digest: str) -> tuple[Crd, ...]:
    """CRDs parsed from YAML once per chart digest (megabytes of YAML take a second), then read from a JSON cache
    (its facts are of this archive's files, which the parse that wrote them read as UTF-8 text). `files`: the
    archive's; `members`: their bytes, when unpacked already."""
    names = sorted(n for n in files if n.startswith(f"{root}/crds/") and n.endswith((".yaml", ".yml")))
    crds = _crds_from_cache(data, origin, digest, (root, names))
    if crds is None:
        # a cold run's processes read the same charts at once: one parses, the others read what it kept
        with one_at_a_time(CRD_CACHE, digest):
            crds = _crds_from_cache(data, origin, digest, (root, names))
            if crds is None:
                shipped = ShippedFiles(data, origin, names)
                members = members if members is not None else _members(data, origin)
                per_file = [parse_crd_documents(members[n], n[len(root) + 1:], shipped, n) for n in names]
                CRD_CACHE.write_json(digest, {"root": root, "files": names,
                                              "crds": [[c.facts() for c in file_crds] for file_crds in per_file]})
                crds = [c for file_crds in per_file for c in file_crds]
    return tuple(sorted(crds, key=lambda c: c.name))


def cached_crds(data: bytes, origin: str, digest: str) -> tuple[Crd, ...] | None:
    """A chart archive's CRDs as read_chart_once gives them, from this process or krc's cache alone: the archive
    is not unpacked (a tenth of a warm `krc argocd generate`). `digest`: the archive's sha256, as the caller
    checked it. None when neither has read this archive."""
    chart = _READ.get(digest)
    if chart is not None:
        return chart.crds
    crds = _crds_from_cache(data, origin, digest)
    return None if crds is None else tuple(sorted(crds, key=lambda c: c.name))


def read_chart_bytes(data: bytes, origin: str) -> Chart:
    try:
        return _read_chart_members(data, origin)
    except UnicodeDecodeError as err:
        raise KrcError(f"{origin} holds a file that is not UTF-8 text ({err.reason}); use the published chart") \
            from None


def _read_chart_members(data: bytes, origin: str) -> Chart:
    digest = hashlib.sha256(data).hexdigest()
    known = chart_texts.kept(digest)  # read before from these bytes: no unpacking
    members: dict[str, bytes] | None = None
    if known is not None:
        files, texts = known
    else:
        members = _members(data, origin)
        files, texts = sorted(members), {}
    roots = {name.split("/", 1)[0] for name in files}
    if len(roots) != 1:
        raise KrcError(f"{origin} does not hold exactly one chart directory")
    root = roots.pop()
    if members is not None:
        texts = {n: content.decode("utf-8") for n, content in members.items() if chart_texts.wanted(root, n)}

    if f"{root}/Chart.yaml" not in texts:
        raise KrcError(f"{origin} has no Chart.yaml")
    meta = yamlio.load(texts[f"{root}/Chart.yaml"], f"{origin}:Chart.yaml") or {}
    values = yamlio.load(texts[f"{root}/values.yaml"], f"{origin}:values.yaml") \
        if f"{root}/values.yaml" in texts else {}
    if not isinstance(meta, dict) or not isinstance(values or {}, dict):
        raise KrcError(f"{origin}: Chart.yaml and values.yaml must be YAML maps; use the published chart")
    templates = tuple(sorted((n[len(root) + 11:], text) for n, text in texts.items()
                             if n.startswith(f"{root}/templates/")))
    crds = _chart_crds(root, files, members, data, origin, digest)
    if members is not None:  # unpacked and read in full: kept for the next read
        chart_texts.keep(digest, files, texts)
    return Chart(str(meta.get("name")), str(meta.get("version")), str(meta.get("appVersion", "")),
                 values or {}, templates, crds)


# Charts read in this process, by the archive's digest: the same archive under another path (another checkout or
# project copy, a chart compared with `krc crd-diff`) is not unpacked and parsed again. A Chart depends on the
# archive's bytes only (the origin names the archive in errors, which are never kept).
_READ: dict[str, Chart] = {}
_READ_LIMIT = 16


def read_chart_once(data: bytes, origin: str) -> Chart:
    """read_chart_bytes, once per archive digest in this process (callers never change the Chart they get)."""
    digest = hashlib.sha256(data).hexdigest()
    chart = _READ.get(digest)
    if chart is None:
        chart = read_chart_bytes(data, origin)
        if len(_READ) >= _READ_LIMIT:
            _READ.pop(next(iter(_READ)))
        _READ[digest] = chart
    return chart


def read_chart(path: Path) -> Chart:
    """A chart archive from disk; parsed once per process (CRDs are megabytes of YAML)."""
    return read_chart_once(path.read_bytes(), str(path))
