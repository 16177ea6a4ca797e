"""Where an environment deploys: the Argo CD destination cluster and the namespaces it writes into.

Two environments with the same cluster and a shared namespace overwrite each other's objects (the same
RayCluster names, the same operator Helm release); the lint rule environment/destination-collision compares one
environment with its peers, which the pipeline gathers from every environment file.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Mapping, Sequence
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
    layers: tuple[str, ...] = ()  # the files of the layers it extends (base first), as `file` names its own

    def shared_with(self, other: Destination) -> tuple[str, ...]:
        """The namespaces both write into on the same cluster; () when they do not collide."""
        if self.cluster != other.cluster:
            return ()
        return tuple(n for n in self.namespaces if n in other.namespaces)


def peer_digests(peers: Sequence[Destination]) -> Mapping[str, str]:
    """Per environment, the digest of what its findings read of the other environments' destinations (the
    destination-collision rule): the peers it shares a cluster namespace with, and whether golden/ holds each side
    (read only for such peers), and the peers whose file is one of its layers (an inherited destination is named
    by the environment it comes from). An environment that moves, or no longer loads, changes the cached results
    of the environments it touches only."""
    return _peer_digests(tuple(peers))


@functools.lru_cache(maxsize=4)  # a run's main process and each job of a worker ask for the same peers
def _peer_digests(peers: tuple[Destination, ...]) -> Mapping[str, str]:
    at_place: dict[tuple[str, str], list[Destination]] = {}
    for peer in peers:
        for namespace in peer.namespaces:
            at_place.setdefault((peer.cluster, namespace), []).append(peer)
    by_file = {peer.file: peer for peer in peers}
    digests = {}
    for own in peers:
        colliding = sorted({repr(p) for n in own.namespaces for p in at_place[(own.cluster, n)]
                            if p.environment != own.environment})
        parents = sorted({repr(dataclasses.replace(by_file[f], accepted=False)) for f in own.layers if f in by_file})
        read = (own.accepted if colliding else False, colliding, parents)
        digests[own.environment] = hashlib.sha256(repr(read).encode()).hexdigest()[:16]
    return digests


def _get(data: Any, *path: str) -> Any:
    for step in path:
        data = data.get(step) if isinstance(data, dict) else None
    return data


def destination_of(environment: str, data: dict[str, Any], file: str, layers: tuple[str, ...] = ()) \
        -> Destination | None:
    """The environment's destination; None when it renders no Argo CD Applications (deployed some other way).
    `layers`: the files of the layers it extends."""
    argocd = data.get("argocd")
    if not isinstance(argocd, dict) or argocd.get("enabled") is False:
        return None
    found = argocd.get("destination")
    target: dict[str, Any] = found if isinstance(found, dict) else {}
    cluster = str(target.get("name") or target.get("server") or IN_CLUSTER)
    names = [target.get("namespace") or data.get("namespace"), _get(data, "operator", "namespace")]
    names += [item.get("name") for item in data.get("namespaces") or [] if isinstance(item, dict)]
    return Destination(environment, file, cluster, tuple(dict.fromkeys(str(n) for n in names if n)), layers=layers)
