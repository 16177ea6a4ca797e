"""Where an environment deploys: the Argo CD destination cluster and the namespaces it writes into.

Two environments with the same cluster and a shared namespace overwrite each other's objects (the same
RayCluster names, the same operator Helm release); the lint rule environment/destination-collision compares one
environment with its peers, which the pipeline gathers from every environment file.
"""
from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

IN_CLUSTER = "https://kubernetes.default.svc"  # Argo CD's own cluster: the destination when none is named


@dataclass(frozen=True)
class Destination:
    environment: str
    file: str  # the environment's own file, for messages
    cluster: str  # Argo CD cluster name, or server URL
    namespaces: tuple[str, ...]  # workload namespace, operator namespace, namespaces the environment creates
    # golden/<env>/ holds an accepted render: a collision with a new environment is that one's finding, not this one's
    accepted: bool = False

    def shared_with(self, other: Destination) -> tuple[str, ...]:
        """The namespaces both write into on the same cluster; () when they do not collide."""
        if self.cluster != other.cluster:
            return ()
        return tuple(n for n in self.namespaces if n in other.namespaces)


def peers_digest(peers: Sequence[Destination]) -> str:
    """What every environment's findings may depend on of where the others deploy: each destination, and whether
    golden/ holds it only for one that collides with another (the collision rule reads it there alone). Accepting
    environments into golden/ then leaves every other environment's cached result alone."""
    writers: dict[tuple[str, str], set[str]] = {}
    for peer in peers:
        for namespace in peer.namespaces:
            writers.setdefault((peer.cluster, namespace), set()).add(peer.environment)
    colliding = {name for names in writers.values() if len(names) > 1 for name in names}
    shown = [dataclasses.replace(p, accepted=p.accepted and p.environment in colliding) for p in peers]
    return hashlib.sha256(repr(shown).encode()).hexdigest()[:16]


def _get(data: Any, *path: str) -> Any:
    for step in path:
        data = data.get(step) if isinstance(data, dict) else None
    return data


def destination_of(environment: str, data: dict[str, Any], file: str) -> Destination | None:
    """The environment's destination; None when it renders no Argo CD Applications (deployed some other way)."""
    argocd = data.get("argocd")
    if not isinstance(argocd, dict) or argocd.get("enabled") is False:
        return None
    found = argocd.get("destination")
    target: dict[str, Any] = found if isinstance(found, dict) else {}
    cluster = str(target.get("name") or target.get("server") or IN_CLUSTER)
    names = [target.get("namespace") or data.get("namespace"), _get(data, "operator", "namespace")]
    names += [item.get("name") for item in data.get("namespaces") or [] if isinstance(item, dict)]
    return Destination(environment, file, cluster, tuple(dict.fromkeys(str(n) for n in names if n)))
