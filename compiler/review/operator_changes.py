"""What a change to the operator chart's objects means, in plain words: the operator restarts (and which feature
gates it turns on or off), the permissions it gains and loses (verbs x resources, per namespace), its Service and
ServiceAccount. The chart's objects are reviewed like every other object (golden/<env>/chart/).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..k8s.shapes import field, mapping, sequence
from .fielddiff import FieldChange

GATES_FLAG = "--feature-gates="
RBAC_KINDS = frozenset({"Role", "ClusterRole"})
Permission = tuple[str, str, str]  # (API group, resource, verb)


def _container(document: dict[str, Any] | None) -> dict[str, Any]:
    containers = sequence(field(document, "spec", "template", "spec").get("containers"))
    return mapping(containers[0]) if containers else {}


def feature_gates(args: Sequence[Any]) -> dict[str, bool]:
    """`--feature-gates=A=true,B=false` of the operator's arguments."""
    gates: dict[str, bool] = {}
    for arg in args:
        if isinstance(arg, str) and arg.startswith(GATES_FLAG):
            for entry in arg[len(GATES_FLAG):].split(","):
                name, _, value = entry.partition("=")
                if name.strip():
                    gates[name.strip()] = value.strip().lower() == "true"
    return gates


def _gate_words(old: dict[str, bool], new: dict[str, bool]) -> list[str]:
    on = sorted(g for g, enabled in new.items() if enabled and not old.get(g, False))
    off = sorted(g for g, enabled in old.items() if enabled and not new.get(g, False))
    listed = sorted(f"{g}={'true' if new[g] else 'false'}" for g in new if g not in old and g not in on)
    unlisted = sorted(g for g in old if g not in new and g not in off)
    words = []
    if listed:
        words.append(f"gates now listed, state unchanged: {', '.join(listed)}")
    if unlisted:
        words.append(f"gates no longer listed (the operator's default applies): {', '.join(unlisted)}")
    if on:
        words.append(f"gates turned on: {', '.join(on)}")
    if off:
        words.append(f"gates turned off: {', '.join(off)}")
    return words


def _deployment_message(old: dict[str, Any] | None, new: dict[str, Any] | None,
                        fields: Sequence[FieldChange]) -> str | None:
    if not any(f.path.startswith("spec.template") for f in fields):
        return None
    before, after = _container(old), _container(new)
    details = []
    if before.get("image") != after.get("image"):
        details.append(f"image {before.get('image')} -> {after.get('image')}")
    if before.get("args") != after.get("args"):
        gates = _gate_words(feature_gates(before.get("args") or []), feature_gates(after.get("args") or []))
        others = [a for a in (after.get("args") or []) if not str(a).startswith(GATES_FLAG)] != \
            [a for a in (before.get("args") or []) if not str(a).startswith(GATES_FLAG)]
        details.extend(gates)
        if others or not gates:
            details.append("arguments changed")
    if not details:
        details.append("Pod template changed")
    return "the operator restarts (a new Pod replaces it; reconciling pauses meanwhile): " + "; ".join(details)


def permissions(document: dict[str, Any] | None) -> set[Permission]:
    out: set[Permission] = set()
    for rule in sequence(mapping(document).get("rules")):
        rule = mapping(rule)
        for group in sequence(rule.get("apiGroups")) or [""]:
            for resource in sequence(rule.get("resources")):
                for verb in sequence(rule.get("verbs")):
                    out.add((str(group), str(resource), str(verb)))
    return out


def describe_permissions(found: set[Permission]) -> str:
    """`secrets: delete, update; events.k8s.io/events: create, patch`, by resource."""
    by_resource: dict[str, set[str]] = {}
    for group, resource, verb in found:
        by_resource.setdefault(f"{group}/{resource}" if group else resource, set()).add(verb)
    return "; ".join(f"{resource}: {', '.join(sorted(verbs))}" for resource, verbs in sorted(by_resource.items()))


def _rbac_messages(kind: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[str]:
    before, after = permissions(old), permissions(new)
    namespace = field(new or old, "metadata").get("namespace")
    where = f"in namespace {namespace}" if kind == "Role" and namespace else "cluster-wide"
    messages = []
    if after - before:
        messages.append(f"permissions gained {where}: {describe_permissions(after - before)}")
    if before - after:
        messages.append(f"permissions lost {where}: {describe_permissions(before - after)}")
    return messages


def operator_messages(kind: str, old: dict[str, Any] | None, new: dict[str, Any] | None,
                      fields: Sequence[FieldChange]) -> list[tuple[str, str]]:
    """(code, message) of a changed Deployment, Role/ClusterRole, Service or ServiceAccount."""
    if kind == "Deployment":
        message = _deployment_message(old, new, fields)
        return [("operator-restart", message)] if message else []
    if kind in RBAC_KINDS:
        return [("rbac", m) for m in _rbac_messages(kind, old, new)]
    if kind in ("RoleBinding", "ClusterRoleBinding") and any(f.path.startswith(("subjects", "roleRef"))
                                                             for f in fields):
        return [("rbac-binding", "who holds the role changed (subjects or roleRef)")]
    if kind == "Service" and any(f.path.startswith("spec") for f in fields):
        paths = ", ".join(sorted({f.path for f in fields if f.path.startswith("spec")}))
        effect = "clients and metrics scraping follow the new ports and selector"
        return [("service", f"Service changed ({paths}): {effect}")]
    if kind == "ServiceAccount" and any(f.path.startswith(("metadata.annotations", "automount")) for f in fields):
        return [("service-account", ("ServiceAccount changed: Pods using it see new annotations (e.g. an IAM role) "
                                     "only once they are recreated"))]
    return []
