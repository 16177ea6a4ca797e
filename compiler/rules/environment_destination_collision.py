"""Each environment deploys to a cluster and namespaces of its own, chosen in its own file.

Two environments on the same cluster sharing a namespace (the workloads' or the operator's) overwrite each
other's objects and Helm release: whichever syncs last wins, and pruning one deletes the other's objects. An
environment that extends another environment (not a layer such as base) inherits its `argocd.destination`
silently: a three-line staging.yaml would deploy into dev's cluster. Only environments with an `argocd` block
are compared (the destination is where their Applications deploy; no destination means Argo CD's own cluster).
When one of the two is already accepted in golden/ and the other is not, the finding is on the new one only:
the environment already deployed keeps being accepted (`krc golden`) while the new one is fixed.

Fails (environment; dev also deploys to the in-cluster server, namespaces ray-demo and kuberay-system):

    extends: base            # argocd: {repoURL: ...} and no destination
    namespace: ray-demo

Passes:

    extends: base
    namespace: ray-staging
    operator: {namespace: kuberay-staging}
    argocd:
      destination: {name: staging-eks}
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from ..diagnostics.problems import Location, Problem
from ..k8s.destinations import destination_of
from .rule import About
from .support.context import LintContext

ABOUT = About("environment/destination-collision", "error",
              "no two environments deploy to the same cluster and namespaces; the destination is not inherited",
              environment_only=True)


def _in_own_file(context: LintContext, found: Location | None) -> Location | None:
    """The finding belongs in the environment's own file (what its author edits), not in the layer that set
    `argocd` for every environment: the first of its destination-deciding keys written there, else its top."""
    if found is None or found.file == context.environment_file or context.locate_environment is None:
        return found
    for path in (("argocd", "destination"), ("namespace",), ("operator", "namespace"), ("extends",)):
        at = context.locate_environment(path)
        if at is not None and at.file == context.environment_file:
            return at
    return Location(context.environment_file)


def check(context: LintContext) -> Iterator[Problem]:
    own = destination_of(context.environment_name, context.environment, context.environment_file)
    if own is None:
        return
    set_at = context.locate_environment(("argocd", "destination")) if context.locate_environment else None
    parents = {peer.file: peer.environment for peer in context.peer_destinations}
    if set_at is not None and set_at.file != context.environment_file and set_at.file in parents:
        yield context.environment_problem(
            f"argocd.destination is inherited from environment {parents[set_at.file]} ({set_at}): this environment "
            f"would deploy into {parents[set_at.file]}'s cluster; set argocd.destination in "
            f"{context.environment_file}", ("argocd", "destination"))
    for peer in context.peer_destinations:
        shared = own.shared_with(peer)
        if context.environment_accepted and not peer.accepted:
            continue  # the new environment is the one to change: accepting this one's own changes goes on
        if shared and peer.environment != own.environment:
            where = "argocd.destination" if context.environment.get("argocd", {}).get("destination") else "argocd"
            problem = context.environment_problem(
                f"environment {own.environment} deploys to the same cluster ({own.cluster}) and namespaces "
                f"({', '.join(shared)}) as environment {peer.environment} ({peer.file}); give it its own "
                "argocd.destination, or its own namespace and operator.namespace", tuple(where.split(".")))
            yield dataclasses.replace(problem, location=_in_own_file(context, problem.location))
