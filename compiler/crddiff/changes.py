"""What a CRD comparison finds: one record per change, ordered the same way on every run."""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

Severity = Literal["breaking", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("breaking", "warning", "info")
SEVERITY_ORDER: dict[str, int] = {name: rank for rank, name in enumerate(SEVERITIES)}


@dataclass(frozen=True)
class CrdChange:
    """One difference between the old and the new definition of a CRD.

    `version` is empty for CRD-wide changes (scope, names, a whole CRD added or removed); `path` is empty for
    CRD- and version-wide changes, otherwise the field inside the custom resource, such as
    `spec.workerGroupSpecs[*].template.spec.containers[*].image` (`[*]` is any list item, `.*` any map value).
    `old` and `new` hold the values compared (JSON-compatible), None when a side has nothing.
    """

    crd: str
    version: str
    path: str
    check: str
    severity: Severity
    message: str
    old: Any = None
    new: Any = None

    def sort_key(self) -> tuple[Any, ...]:
        # breaking first inside each CRD, so a reviewer reads what matters before the additions
        return (self.crd, SEVERITY_ORDER[self.severity], self.version, self.path, self.check, self.message,
                json.dumps([self.old, self.new], sort_keys=True, default=str))

    def as_dict(self) -> dict[str, Any]:
        return {"crd": self.crd, "version": self.version, "path": self.path, "check": self.check,
                "severity": self.severity, "message": self.message, "old": self.old, "new": self.new}


def sorted_changes(changes: Iterable[CrdChange]) -> list[CrdChange]:
    return sorted(changes, key=CrdChange.sort_key)


def has_breaking(changes: Iterable[CrdChange]) -> bool:
    return any(change.severity == "breaking" for change in changes)


def severity_counts(changes: Iterable[CrdChange]) -> dict[str, int]:
    counts: dict[str, int] = {name: 0 for name in SEVERITIES}
    for change in changes:
        counts[change.severity] += 1
    return counts


# Every check the comparison can report, with what it flags; severities are argued in `checks`' docstring.
CHECKS: dict[str, str] = {
    "crd-added": "a CRD only the new side has",
    "crd-removed": "a CRD only the old side has",
    "scope-changed": "Namespaced <-> Cluster",
    "kind-changed": "spec.names.kind changed",
    "names-changed": "short names, categories, singular or list kind changed",
    "conversion-changed": "spec.conversion changed",
    "version-added": "a version only the new side has",
    "version-removed": "an unserved, unstored version removed",
    "version-served": "a version is served again",
    "served-version-removed": "a served version removed or no longer served",
    "stored-version-removed": "a version in status.storedVersions (or the old storage version) removed",
    "storage-version-changed": "another version is now the storage version",
    "version-deprecated": "a version newly marked deprecated",
    "version-undeprecated": "a version no longer marked deprecated",
    "deprecation-warning-changed": "the deprecation warning text changed",
    "subresource-added": "/status or /scale added",
    "subresource-removed": "/status or /scale removed",
    "subresource-changed": "/scale paths changed",
    "printer-columns-changed": "kubectl get columns changed",
    "selectable-fields-changed": "field selectors changed",
    "field-added": "a new optional field (or list item / map value schema)",
    "required-field-added": "a new field that is required",
    "field-removed": "a field (or list item / map value schema) removed",
    "field-now-required": "an existing field became required",
    "field-now-optional": "a field is no longer required",
    "type-changed": "type or x-kubernetes-int-or-string changed (one finding per field)",
    "values-restricted": "a map value, list item or field schema added where any value was kept",
    "enum-added": "an enum restriction where any value was allowed",
    "enum-removed": "the enum restriction dropped",
    "enum-value-removed": "enum values removed",
    "enum-value-added": "enum values added",
    "default-added": "a default where there was none",
    "default-changed": "a different default",
    "default-removed": "the default dropped",
    "bound-tightened": "min*/max* bound added or tightened, exclusive bound, multipleOf or uniqueItems set",
    "bound-loosened": "a bound removed or relaxed",
    "pattern-added": "a pattern where there was none",
    "pattern-changed": "a different pattern",
    "pattern-removed": "the pattern dropped",
    "format-changed": "format added, changed or removed",
    "nullable-added": "null now accepted",
    "nullable-removed": "null no longer accepted",
    "validation-rule-added": "a CEL rule (x-kubernetes-validations) added",
    "validation-rule-changed": "a CEL rule rewritten, or its options changed",
    "validation-rule-removed": "a CEL rule removed",
    "validation-message-changed": "only the message of a CEL rule changed",
    "preserve-unknown-fields-added": "x-kubernetes-preserve-unknown-fields set",
    "preserve-unknown-fields-removed": "x-kubernetes-preserve-unknown-fields unset: unknown fields pruned",
    "list-type-changed": "x-kubernetes-list-type changed",
    "list-map-keys-changed": "x-kubernetes-list-map-keys changed",
    "map-type-changed": "x-kubernetes-map-type changed",
    "embedded-resource-changed": "x-kubernetes-embedded-resource changed",
    "description-changed": "a field's description changed",
    "documentation-changed": "title, example or externalDocs changed",
    "unhandled-change": "any other schema keyword changed (allOf, anyOf, oneOf, not...)",
}
