"""Run Ray's KubeRay autoscaling-config generator over many RayClusters: JSON in on stdin, JSON out on stdout.

This file is not imported by krc: krc runs it with the Python of an isolated environment that has the `ray`
package of one Ray version (`.venv-ray/<version>/`), so krc itself never imports Ray. It uses only the standard
library and Ray, and prints nothing but its one JSON answer.

stdin:  {"clusters": {"<key>": <RayCluster object>, ...}}
stdout: {"rayVersion": "2.58.0", "results": {"<key>": {"config": {...}, "nodeTypeOrder": [...], "warnings": [...]}
                                          or {"error": "...", "warnings": [...]}}}
"""
from __future__ import annotations

import importlib
import json
import logging
import sys
from typing import Any

GENERATOR_MODULE = "ray.autoscaler._private.kuberay.autoscaling_config"


class _Collect(logging.Handler):
    """The generator explains itself in log records (e.g. CPU set twice); keep them for the cluster at hand."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _one(generate: Any, cluster: Any, collect: _Collect) -> dict[str, Any]:
    collect.messages = []
    try:
        config = generate(cluster)
        # the answer is written with sorted keys: keep the node types' order (head, then spec order) beside it
        answer: dict[str, Any] = {"config": config, "nodeTypeOrder": list(config["available_node_types"])}
    except Exception as err:  # noqa: BLE001 - the autoscaler would fail the same way: that is the answer
        answer = {"error": f"{type(err).__name__}: {err}"}
    answer["warnings"] = list(collect.messages)
    return answer


def main() -> int:
    request = json.load(sys.stdin)
    ray = importlib.import_module("ray")
    generate = importlib.import_module(GENERATOR_MODULE)._derive_autoscaling_config_from_ray_cr
    collect = _Collect()
    root = logging.getLogger("ray")
    root.addHandler(collect)
    root.propagate = False  # nothing on stderr but real failures
    results = {key: _one(generate, cluster, collect) for key, cluster in sorted(request["clusters"].items())}
    json.dump({"rayVersion": ray.__version__, "results": results}, sys.stdout, sort_keys=True, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
