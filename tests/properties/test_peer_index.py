"""The peer index finds exactly what a pass over every destination finds: what an environment's
destination-collision findings read, and whether golden/ holds it."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.k8s.destinations import Destination, PeerIndex, peer_index

names = st.sampled_from(["dev", "staging", "prod", "gpu", "batch"])
clusters = st.sampled_from(["in-cluster", "eks-a", "eks-b"])
namespaces = st.lists(st.sampled_from(["ray", "kuberay-system", "ray-batch", "default"]), max_size=3, unique=True)
# layers: base, a shared layer, or another environment's own file (extending it)
layer_files = st.sampled_from(["environments/base.yaml", "environments/_shared.yaml", "environments/dev.yaml",
                               "environments/prod.yaml", "environments/gpu.yaml"])
destinations = st.builds(lambda e, c, n, a, layers: Destination(e, f"environments/{e}.yaml", c, tuple(n), a,
                                                                tuple(layers)),
                         names, clusters, namespaces, st.booleans(), st.lists(layer_files, max_size=2, unique=True))


def _read_by_a_pass(peers: tuple[Destination, ...], own: Destination) -> tuple[Destination, ...]:
    return tuple(p for p in peers if (own.shared_with(p) and p.environment != own.environment)
                 or p.file in own.layers)


@settings(max_examples=300)
@given(st.lists(destinations, max_size=8), destinations)
def test_what_an_environment_reads_of_its_peers_is_what_a_pass_over_them_finds(peers: list[Destination],
                                                                                own: Destination) -> None:
    unique = tuple({p.environment: p for p in peers}.values())  # one destination per environment, as a run has
    index = PeerIndex(unique)
    assert index.relevant_to(own) == _read_by_a_pass(unique, own)
    assert index.colliding(own) == [p for p in unique if own.shared_with(p) and p.environment != own.environment]
    assert index.relevant_to(None) == ()
    for name in ("dev", "prod", "nowhere"):
        assert index.accepted(name) == any(p.environment == name and p.accepted for p in unique)


def test_the_index_is_built_once_per_tuple_of_peers() -> None:
    peers = (Destination("dev", "environments/dev.yaml", "in-cluster", ("ray",)),)
    assert peer_index(peers) is peer_index(peers)
    same_values = tuple(list(peers))
    other = (*peers, Destination("prod", "environments/prod.yaml", "in-cluster", ("ray",)))
    assert peer_index(other) is not peer_index(peers)
    assert peer_index(other).colliding(peers[0]) == [other[1]]
    assert peer_index(same_values).peers is same_values
