"""The autoscaler's own view of each RayCluster spec: what Ray's KubeRay autoscaling-config generator made of it.

The generator (`ray.autoscaler._private.kuberay.autoscaling_config`, run by the `autoscaler` stage in an
environment of its own) turns a RayCluster into `available_node_types`: per node type the logical resources
(CPU, GPU, memory, custom), min/max workers and an optional idle timeout, plus a global `idle_timeout_minutes`.
These records carry that answer to the rules and the review; the rules never run the generator themselves.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...k8s.objects import object_ref

HEAD_NODE_TYPE = "headgroup"  # the generator's name for the head group
STANDARD_RESOURCES = ("CPU", "GPU", "memory")


@dataclass(frozen=True)
class NodeType:
    name: str  # the worker group's name, or "headgroup"
    min_workers: int
    max_workers: int  # maxReplicas x numOfHosts as the generator reads them; 0 for the head
    resources: tuple[tuple[str, int], ...]  # sorted (resource, amount): CPU, GPU, memory (bytes), custom ones
    idle_timeout_s: float | None  # the group's own idleTimeoutSeconds, when set
    labels: tuple[tuple[str, str], ...] = ()

    @property
    def is_head(self) -> bool:
        return self.name == HEAD_NODE_TYPE

    def amount(self, resource: str) -> int:
        return dict(self.resources).get(resource, 0)

    @property
    def custom(self) -> dict[str, int]:
        """Every resource but CPU, GPU and memory (TPU and TPU-...-head included)."""
        return {k: v for k, v in self.resources if k not in STANDARD_RESOURCES}

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "minWorkers": self.min_workers, "maxWorkers": self.max_workers,
                "resources": dict(self.resources), "idleTimeoutSeconds": self.idle_timeout_s,
                "labels": dict(self.labels)}


@dataclass(frozen=True)
class GeneratedConfig:
    """The generator's answer for one cluster spec: its config, or the error the autoscaler would fail with."""

    ray_version: str
    node_types: tuple[NodeType, ...] = ()  # head first, then worker groups in spec order
    idle_timeout_minutes: float = 1.0
    max_workers: int = 0
    upscaling_speed: float = 0.0
    error: str = ""
    warnings: tuple[str, ...] = ()

    @property
    def head(self) -> NodeType | None:
        return next((n for n in self.node_types if n.is_head), None)

    @property
    def workers(self) -> tuple[NodeType, ...]:
        return tuple(n for n in self.node_types if not n.is_head)

    def node_type(self, name: str) -> NodeType | None:
        return next((n for n in self.workers if n.name == name), None)


def _number(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _one_line(text: Any) -> str:
    """Ray's messages span lines; findings are one line each."""
    return " ".join(str(text).split())


def config_from_answer(answer: Mapping[str, Any], ray_version: str) -> GeneratedConfig:
    """One cluster's entry of the generator runner's JSON answer as a record."""
    warnings = tuple(_one_line(w) for w in answer.get("warnings") or ())
    if answer.get("error") or not isinstance(answer.get("config"), dict):
        return GeneratedConfig(ray_version, error=_one_line(answer.get("error") or "no config"), warnings=warnings)
    config = answer["config"]
    types = config.get("available_node_types") or {}
    head_name = str(config.get("head_node_type") or HEAD_NODE_TYPE)
    # the generator's own order (head, then worker groups in spec order), which the runner records
    recorded = answer.get("nodeTypeOrder")
    order: list[Any] = recorded if isinstance(recorded, list) else list(types)
    ordered = [head_name, *(str(n) for n in order if n != head_name and n in types)]
    nodes = []
    for name in ordered:
        node = types.get(name)
        if not isinstance(node, dict):
            continue
        idle = node.get("idle_timeout_s")
        nodes.append(NodeType(
            HEAD_NODE_TYPE if name == head_name else str(name), _number(node.get("min_workers")),
            _number(node.get("max_workers")),
            tuple(sorted((str(k), _number(v)) for k, v in (node.get("resources") or {}).items())),
            float(idle) if isinstance(idle, (int, float)) else None,
            tuple(sorted((str(k), str(v)) for k, v in (node.get("labels") or {}).items()))))
    idle_minutes = config.get("idle_timeout_minutes")
    return GeneratedConfig(ray_version, tuple(nodes),
                           float(idle_minutes) if isinstance(idle_minutes, (int, float)) else 1.0,
                           _number(config.get("max_workers")), float(config.get("upscaling_speed") or 0),
                           warnings=warnings)


SpecKey = tuple[str, tuple[str, ...]]  # (object reference Kind/namespace/name, where the cluster spec sits)


def spec_key(document: dict[str, Any], path: tuple[str, ...]) -> SpecKey:
    return object_ref(document), tuple(path)


@dataclass(frozen=True)
class AutoscalerView:
    """The generator's answers for the cluster specs of one environment (or one set of manifests).

    `unavailable` says why there are none (the Ray version's generator is not installed, and how to install it):
    rules then stay silent and the pipeline reports that the autoscaler's view was not checked.
    """

    configs: Mapping[SpecKey, GeneratedConfig] = field(default_factory=dict)
    ray_version: str = ""
    unavailable: str = ""

    def config_for(self, document: dict[str, Any], path: tuple[str, ...]) -> GeneratedConfig | None:
        return self.configs.get(spec_key(document, path))
