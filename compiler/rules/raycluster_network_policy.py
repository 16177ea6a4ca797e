"""`networkPolicy` rules must fit its mode, and group names must be usable in NetworkPolicy names.

Mode DenyAllEgress leaves ingress open (no ingressRules); DenyAllIngress leaves egress open (no egressRules);
every `workerGroups[].groupName` must name a worker group; worker group names must be DNS-1123 labels.

Fails:

    networkPolicy:
      mode: DenyAllEgress
      head:
        ingressRules: [{}]

Passes:

    networkPolicy:
      mode: DenyAllEgress
      head:
        egressRules: [{}]
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics.problems import Problem
from ..k8s.names import dns1123_label_errors
from .rule import About
from .support.context import LintContext
from .support.ray_objects import cluster_views

ABOUT = About("raycluster/network-policy", "error",
              "networkPolicy rules fit the mode and name existing worker groups", versions=">=1.7")

FORBIDDEN = {"DenyAllEgress": ("ingressRules", "ingress"), "DenyAllIngress": ("egressRules", "egress")}


def check(context: LintContext) -> Iterator[Problem]:
    for cluster in cluster_views(context):
        policy = cluster.spec.get("networkPolicy")
        if not isinstance(policy, dict):
            continue
        obj, base = cluster.obj, cluster.at("networkPolicy")
        mode = str(policy.get("mode") or "DenyAll")
        field, direction = FORBIDDEN.get(mode, ("", ""))
        entries = [(role, policy.get(role), base + (role,)) for role in ("head", "worker")]
        for i, entry in enumerate(policy.get("workerGroups") or []):
            if isinstance(entry, dict):
                entries.append((f'workerGroups["{entry.get("groupName")}"]', entry, base + ("workerGroups", i)))
        for label, entry, path in entries:
            if field and isinstance(entry, dict) and entry.get(field):
                yield obj.problem(f"networkPolicy.{label}.{field} is set but mode {mode} does not restrict "
                                  f"{direction}; remove the rules or use mode DenyAll", path + (field,))
        names = {g.name for g in cluster.workers}
        for i, entry in enumerate(policy.get("workerGroups") or []):
            if isinstance(entry, dict) and entry.get("groupName") not in names:
                yield obj.problem(f"networkPolicy.workerGroups names '{entry.get('groupName')}', which is not a "
                                  "worker group of this cluster; fix the groupName", base + ("workerGroups", i))
        for group in cluster.workers:
            errors = dns1123_label_errors(group.name)
            if errors:
                yield obj.problem(f"worker group name '{group.name}' is used in NetworkPolicy names and must be a "
                                  f"DNS-1123 label ({'; '.join(errors)}); rename the group",
                                  group.path + ("groupName",))
