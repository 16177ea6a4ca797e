"""Bounds on the work hostile input can cause, each with the environment variable that raises it.

krc runs in CI and inside Argo CD's repo-server on repositories many people push to: an alias bomb, a
10,000-deep document, a chart that expands to gigabytes or a server that trickles one byte at a time must end in
a clear error, not a hung or exhausted process. The defaults are far above what real projects use (README
"Security model" lists them); raise one by exporting its variable, e.g. `KRC_MAX_YAML_NODES=5000000`.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..diagnostics.problems import KrcError
from . import variables


@dataclass(frozen=True)
class Limit:
    variable: str
    default: int
    what: str  # for messages: "YAML nesting depth", ...

    def __post_init__(self) -> None:
        variables.register_bounds([self.variable])  # each bound is a variable krc reads, documented here

    @property
    def value(self) -> int:
        """The limit now (read on every use, so a test or a wrapper script can change it)."""
        raw = variables.value(self.variable)
        if not raw:
            return self.default
        try:
            value = int(raw)
        except ValueError:
            value = 0
        if value <= 0:
            raise KrcError(f"{self.variable}={raw!r} is not a positive whole number; unset it or give a number")
        return value

    def exceeded(self, detail: str) -> str:
        """The end of an error message: what went over, and how to raise the bound if the input is genuine."""
        return f"{detail} exceeds the {self.what} limit of {self.value}; if this input is genuine, raise " \
               f"{self.variable}"


ENVIRONMENT_FILE_BYTES = Limit("KRC_MAX_ENVIRONMENT_BYTES", 1 << 20, "environment file size (bytes)")
TEMPLATE_FILE_BYTES = Limit("KRC_MAX_TEMPLATE_BYTES", 4 << 20, "template file size (bytes)")
YAML_DEPTH = Limit("KRC_MAX_YAML_DEPTH", 100, "YAML nesting depth")
YAML_NODES = Limit("KRC_MAX_YAML_NODES", 2_000_000, "YAML node count (aliases expanded)")
ARCHIVE_BYTES = Limit("KRC_MAX_ARCHIVE_BYTES", 256 << 20, "chart archive uncompressed size (bytes)")
ARCHIVE_MEMBERS = Limit("KRC_MAX_ARCHIVE_MEMBERS", 10_000, "chart archive member count")
DOWNLOAD_BYTES = Limit("KRC_MAX_DOWNLOAD_BYTES", 256 << 20, "download size (bytes)")
DOWNLOAD_SECONDS = Limit("KRC_DOWNLOAD_DEADLINE", 120, "download deadline (seconds per file)")
JSONNET_STACK = Limit("KRC_JSONNET_MAX_STACK", 500, "Jsonnet stack depth")
JINJA_RANGE = Limit("KRC_JINJA_MAX_RANGE", 100_000, "Jinja2 range() length")
JINJA_SECONDS = Limit("KRC_TEMPLATE_SECONDS", 60, "template time (seconds)")
# What a Jsonnet evaluation may add to krc's resident memory (go-jsonnet has no bound of its own)
JSONNET_MEMORY_MB = Limit("KRC_JSONNET_MEMORY_MB", 1024, "Jsonnet memory (MiB)")
# The length of a string or list a Jinja2 operator or call produces ('x' * 10**12)
JINJA_SIZE = Limit("KRC_JINJA_MAX_SIZE", 16 << 20, "Jinja2 string or list length")
# How long a run waits for another run's .krc.lock
LOCK_SECONDS = Limit("KRC_LOCK_SECONDS", 300, "lock wait (seconds)")
PARAMETER_BYTES = Limit("KRC_MAX_PARAMETER_BYTES", 253, "plugin parameter value length")
# The engine stops itself past this much Go heap (its collector aims far lower: native/client.py)
ENGINE_MEMORY_MB = Limit("KRC_ENGINE_MEMORY_MB", 1024, "engine memory (MiB)")
# How long `krc argocd init` or `generate` may run before it stops itself with a message: Argo CD's deadline (the
# controller's repo-server timeout, 60 s by default, less the repository's transfer) ends a plugin silently
PLUGIN_SECONDS = Limit("KRC_PLUGIN_SECONDS", 45, "plugin command time (seconds)")

ALL = (ENVIRONMENT_FILE_BYTES, TEMPLATE_FILE_BYTES, YAML_DEPTH, YAML_NODES, ARCHIVE_BYTES, ARCHIVE_MEMBERS,
       DOWNLOAD_BYTES, DOWNLOAD_SECONDS, JSONNET_STACK, JINJA_RANGE, JINJA_SECONDS, PARAMETER_BYTES,
       ENGINE_MEMORY_MB, JSONNET_MEMORY_MB, JINJA_SIZE, LOCK_SECONDS, PLUGIN_SECONDS)
