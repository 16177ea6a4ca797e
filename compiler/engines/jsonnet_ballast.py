"""A ballast for the Go collector inside gojsonnet in the command's own process.

The Go runtime inside gojsonnet reads its collector's target (GOGC) once, from the environment the process started
with, so krc can choose it only for the worker processes it starts (settings/collector.py). The command's own
process runs at Go's default: a collection each time the heap doubles over what is live. A Jsonnet run keeps
little alive, so that process collected every few megabytes of allocation, each time also scanning go-jsonnet's
standard library (2.2 MB held in the module's data).

What can still be changed after the start is what counts as live. A ballast is a large string the runtime never
scans (it holds no pointers) and never frees: one external variable of a Jsonnet VM made through the libjsonnet C
API that the gojsonnet wheel exports, a VM never evaluated. With 4 MB held, the next collection comes after about
4 MB more allocation than before, every time: measured on 10 environments' batches replayed 15 times in a fresh
process, 100-106 ms per round without, 83-90 with 4 MB and 77-83 with 8 MB, at 8 and 15 MB more at peak (at
GOGC=200: 86-90 ms and 6 MB more; at 400: 74-77 ms and 19 MB more). It costs its size and as much again of garbage
between collections, so it is held only where many environments compile (beside workers, or alone with more than a
few), and kept small (`collector.command_ballast_mb`).
"""
from __future__ import annotations

import ctypes
import importlib.util

_HELD: list[int] = []  # the VM holding this process's ballast (never destroyed: the ballast lives with the process)


def hold(megabytes: int) -> bool:
    """Hold a ballast of `megabytes` in this process's Go heap, once per process (later calls change nothing). False
    when none is held: 0 asked for, or the module exports no libjsonnet C API (another build of gojsonnet)."""
    if _HELD:
        return True
    if megabytes <= 0:
        return False
    # the module's own library, found without importing it (a command that compiles nothing never loads it); loaded
    # here or imported later, it is one library with one Go runtime
    spec = importlib.util.find_spec("_gojsonnet")
    if spec is None or not spec.origin:
        return False
    try:
        library = ctypes.CDLL(spec.origin)
        make, external = library.jsonnet_make, library.jsonnet_ext_var
    except (OSError, AttributeError):
        return False
    make.restype = ctypes.c_void_p
    make.argtypes = []
    external.restype = None
    external.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
    vm = make()
    if not vm:
        return False
    # the VM copies the value into a Go string: this temporary goes as soon as the call returns
    external(vm, b"krc-ballast", b" " * (megabytes << 20))
    _HELD.append(vm)
    return True
