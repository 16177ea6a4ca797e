"""`krc init`: the text of a new environment file, built as data and written by the canonical dumper.

The file starts with the schema comment editors use for completion, and says what to add next.
"""
from __future__ import annotations

import re
from typing import Any

from ..documents import yamlio

SCHEMA_COMMENT = "# yaml-language-server: $schema=../compiler/schemas/environment.schema.json"
ENVIRONMENT_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def destination(value: str) -> dict[str, str]:
    """An Argo CD destination: an API server URL, else a cluster name as registered in Argo CD."""
    return {"server": value} if value.startswith(("https://", "http://")) else {"name": value}


def own_namespace(prefix: str, name: str) -> str:
    """`ray-staging`: a namespace of the environment's own, named after it (the name alone when too long)."""
    candidate = f"{prefix}-{name}"
    return candidate if len(candidate) <= 63 else name


def new_environment(name: str, extends: str, destination_cluster: str | None, namespace: str | None) -> str:
    """The file `krc init` writes for environment `name`: namespaces of its own for the workloads and the
    operator (which watches only its own), so it shares none with the environment it extends, on whatever
    cluster it deploys to."""
    data: dict[str, Any] = {"extends": extends, "description": f"Describe what {name} is for"}
    workloads = namespace or own_namespace("ray", name)
    data["namespace"] = workloads
    data["namespaces"] = [{"name": workloads}]
    # an operator watching every namespace would also reconcile the other environments' clusters on this cluster
    data["operator"] = {"namespace": own_namespace("kuberay", name), "watchNamespaces": [workloads]}
    if destination_cluster:
        data["argocd"] = {"destination": destination(destination_cluster)}
    # extends first: it is what a reader needs to know before anything else (the dumper sorts keys)
    first = f"extends: {yamlio.dump(extends).splitlines()[0]}\n"
    rest = yamlio.dump({k: v for k, v in data.items() if k != "extends"})
    guide = (f"# {name}: created by 'krc init' from {extends}. Add clusters, jobs or services (README:\n"
             f"# 'Environment files'); 'krc explain {name} PATH' shows any value and where it comes from.\n")
    return f"{SCHEMA_COMMENT}\n{guide}{first}{rest}"
