"""Run Ray's KubeRay autoscaling-config generator over many RayClusters: JSON requests in on stdin, one per line,
and one JSON answer per line on stdout, until stdin closes (krc keeps it up between requests: helper_process).

This file is not imported by krc: krc runs it with the Python of an isolated environment that has the `ray`
package of one Ray version (`.venv-ray/<version>/`), so krc itself never imports Ray. It uses only the standard
library and Ray, and prints nothing but its JSON answers.

It exits when stdin closes (at once: _leave), or after $KRC_HELPER_IDLE_SECONDS without a request. With
`--socket PATH` it answers the same lines on every connection to a Unix socket there instead (one run's processes
share it: native/shared_helper.py), one request at a time, until stdin closes.

a line in:  {"clusters": {"<key>": <RayCluster object>, ...}}
a line out: {"rayVersion": "2.58.0", "results": {"<key>": {"config": {...}, "nodeTypeOrder": [...],
             "warnings": [...]} or {"error": "...", "warnings": [...]}}}

Every cluster is judged as the autoscaler of that one cluster would judge it: Ray logs some warnings only once
per process (`ray.util.debug.log_once`, keyed by group name), so that memory is cleared before each cluster, or a
cluster's warnings would depend on which clusters came before it.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import json
import logging
import marshal
import os
import signal
import socket
import sys
import threading
from typing import Any, NoReturn

GENERATOR_MODULE = "ray.autoscaler._private.kuberay.autoscaling_config"


class _Collect(logging.Handler):
    """The generator explains itself in log records (e.g. CPU set twice); keep them for the cluster at hand."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _one(generate: Any, forget_logged: Any, cluster: Any, collect: _Collect) -> dict[str, Any]:
    collect.messages = []
    forget_logged()
    try:
        config = generate(cluster)
        # the answer is written with sorted keys: keep the node types' order (head, then spec order) beside it
        answer: dict[str, Any] = {"config": config, "nodeTypeOrder": list(config["available_node_types"])}
    except Exception as err:  # noqa: BLE001 - the autoscaler would fail the same way: that is the answer
        answer = {"error": f"{type(err).__name__}: {err}"}
    answer["warnings"] = list(collect.messages)
    return answer


def _serve_socket(path: str, answer: Any) -> int:
    """Answer JSON lines on every connection to a Unix socket at `path`, one request at a time, until stdin (the
    pipe of the krc process that started it) closes; `ready` on stdout once connections are taken."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(16)
    one_at_a_time = threading.Lock()

    def connection(conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as reader:
            for line in reader:
                with one_at_a_time:
                    out = answer(json.loads(line))
                conn.sendall(out.encode() + b"\n")

    def accept() -> None:
        while True:
            conn, _ = server.accept()
            threading.Thread(target=connection, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.buffer.read()
    return _leave()


def _leave() -> NoReturn:
    """End now, everything written: Python's usual exit tears down the heap Ray's modules built (and runs Ray's own
    exit handlers for a Ray this process never started), about 0.1 s that krc waits for at the end of its command."""
    sys.stdout.flush()
    os._exit(0)


def check_each_schema_once(jsonschema: Any) -> None:
    """Make jsonschema.validate check a schema against its metaschema once per schema content, not on every call.
    Ray's validate_config loads the same schema file and validates each cluster's config with it, and checking
    that schema again is most of the generator's time. Only the check and the validator it makes are remembered
    (they depend on the schema alone: a schema that fails the check fails it every time, since only a passing one
    is remembered); every config is validated as jsonschema.validate does (jsonschema 4's own steps), so every
    answer is the same. A schema's content is told by marshal's bytes of it, which keep every type (True against 1,
    1 against 1.0) and order, in a tenth of the time of its sorted JSON text (0.008 against 0.08 ms for Ray's)."""
    version = importlib.metadata.version("jsonschema")
    if not version.startswith("4."):
        return  # another validate(): left as it is
    validators = importlib.import_module("jsonschema.validators")
    exceptions = importlib.import_module("jsonschema.exceptions")
    checked: dict[tuple[Any, bytes | str], Any] = {}  # (class, the schema's content): the validator made of it

    def content(schema: Any) -> bytes | str:
        try:
            return marshal.dumps(schema)
        except ValueError:  # a value marshal does not write (or nested past its depth)
            return json.dumps(schema, sort_keys=True, default=repr)

    def validate(instance: Any, schema: Any, cls: Any = None, *args: Any, **kwargs: Any) -> None:
        if cls is None:
            cls = validators.validator_for(schema)
        key = (cls, content(schema))
        validator = checked.get(key)
        if validator is None:
            cls.check_schema(schema)
            validator = checked[key] = cls(schema)
        if args or kwargs:
            validator = cls(schema, *args, **kwargs)
        error = exceptions.best_match(validator.iter_errors(instance))
        if error is not None:
            raise error

    jsonschema.validate = validate


def main() -> int:
    ray = importlib.import_module("ray")
    check_each_schema_once(importlib.import_module("jsonschema"))
    generate = importlib.import_module(GENERATOR_MODULE)._derive_autoscaling_config_from_ray_cr
    forget_logged = importlib.import_module("ray.util.debug").reset_log_once
    collect = _Collect()
    root = logging.getLogger("ray")
    root.addHandler(collect)
    root.propagate = False  # nothing on stderr but real failures

    def answer(request: Any) -> str:
        results = {key: _one(generate, forget_logged, cluster, collect)
                   for key, cluster in sorted(request["clusters"].items())}
        return json.dumps({"rayVersion": ray.__version__, "results": results}, sort_keys=True, default=str)

    if sys.argv[1:2] == ["--socket"] and len(sys.argv) == 3:
        return _serve_socket(sys.argv[2], answer)
    # idle for longer than krc asked: exit (krc starts another when it needs one)
    idle = float(os.environ.get("KRC_HELPER_IDLE_SECONDS") or "2")
    signal.signal(signal.SIGALRM, lambda *_: os._exit(0))
    while True:
        signal.setitimer(signal.ITIMER_REAL, idle)
        line = sys.stdin.readline()
        signal.setitimer(signal.ITIMER_REAL, 0)
        if not line:
            return _leave()
        sys.stdout.write(answer(json.loads(line)) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
