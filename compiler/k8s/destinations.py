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


class PeerIndex:
    """The project's destinations by where they deploy (cluster, namespace), by file and by environment: what an
    environment's findings read of the others (`relevant_to`) is found without a pass over every one of them, so
    a run's findings cost its environments once each, not each environment times all of them."""

    def __init__(self, peers: tuple[Destination, ...]):
        self.peers = peers
        self.at_place: dict[tuple[str, str], list[int]] = {}  # positions in `peers`
        for position, peer in enumerate(peers):
            for namespace in peer.namespaces:
                self.at_place.setdefault((peer.cluster, namespace), []).append(position)
        self.by_file = {peer.file: position for position, peer in enumerate(peers)}
        self.by_environment = {peer.environment: peer for peer in peers}

    def _colliding(self, own: Destination) -> set[int]:
        return {i for n in own.namespaces for i in self.at_place.get((own.cluster, n), ())
                if self.peers[i].environment != own.environment}

    def colliding(self, own: Destination) -> list[Destination]:
        """The other environments sharing a cluster namespace with `own`, in the peers' order."""
        return [self.peers[i] for i in sorted(self._colliding(own))]

    def relevant_to(self, own: Destination | None) -> tuple[Destination, ...]:
        """What environment/destination-collision reads for `own` (none without a destination): the peers it
        collides with and those whose file is one of its layers (an inherited destination names them), in the
        peers' order; the same peers its cache key covers (peer_digests)."""
        if own is None:
            return ()
        found = self._colliding(own)
        found.update(self.by_file[f] for f in own.layers if f in self.by_file)
        return tuple(self.peers[i] for i in sorted(found))

    def accepted(self, environment: str) -> bool:
        """golden/ holds the environment's accepted render (as its peer entry says)."""
        peer = self.by_environment.get(environment)
        return peer is not None and peer.accepted


# the index of the peers last asked about: a run's processes pass the one tuple of peers to every environment
_LAST: list[PeerIndex] = []


def peer_index(peers: tuple[Destination, ...]) -> PeerIndex:
    """The PeerIndex of `peers`, built once for the same tuple (compared by identity: hashing hundreds of
    destinations per environment would cost what the index saves)."""
    if not _LAST or _LAST[0].peers is not peers:
        _LAST[:] = [PeerIndex(peers)]
    return _LAST[0]


def peer_digests(peers: Sequence[Destination]) -> Mapping[str, str]:
    """Per environment, the digest of what its findings read of the other environments' destinations (the
    destination-collision rule): the peers it shares a cluster namespace with, and whether golden/ holds each side
    (read only for such peers), and the peers whose file is one of its layers (an inherited destination is named
    by the environment it comes from). An environment that moves, or no longer loads, changes the cached results
    of the environments it touches only."""
    return _peer_digests(tuple(peers))


@functools.lru_cache(maxsize=4)  # a run's main process and each job of a worker ask for the same peers
def _peer_digests(peers: tuple[Destination, ...]) -> Mapping[str, str]:
    index = peer_index(peers)  # the one environment_context then reads (the same tuple: tuple() of a tuple is it)
    digests = {}
    for own in peers:
        colliding = sorted(repr(p) for p in index.colliding(own))
        parents = sorted({repr(dataclasses.replace(peers[index.by_file[f]], accepted=False)) for f in own.layers
                          if f in index.by_file})
        read = (own.accepted if colliding else False, colliding, parents)
        digests[own.environment] = hashlib.sha256(repr(read).encode()).hexdigest()[:16]
    return digests


def _get(data: Any, *path: str) -> Any:
    for step in path:
        data = data.get(step) if isinstance(data, dict) else None
    return data


# The top-level settings destination_of reads: an environment's destination is read from these alone
DESTINATION_SETTINGS = frozenset({"argocd", "namespace", "operator", "namespaces"})


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
