"""The schema checks: one parallel walk over the old and new openAPIV3Schema of a CRD version.

The walk descends `properties`, `items` and `additionalProperties` of both schemas together and compares the
attributes of each pair of nodes directly. Equal subtrees are skipped with one C-level `==`, so the cost follows
the size of the change, not the size of the CRD (KubeRay's are 1 MB each).

## Severities, and why

`breaking` means existing objects, clients or stored data can stop working once the new CRD is applied;
`warning` means a person must look, because the effect depends on the data or on who reads the field; `info`
is purely additive or loosening. The defaults follow crdify, the strictest widely used checker (and OLM v1's
upgrade-safety preflight, which runs it):

- **breaking** (as crdify): CRD removed, scope changed, served or stored version removed, storage version
  changed, field removed, type changed (including `x-kubernetes-int-or-string`, reported once per field however
  many of `type`, `x-kubernetes-int-or-string` and its companion `anyOf`/`allOf` change), enum restriction added or enum
  value removed, new required field or existing field made required, default added, changed or removed, any
  `minimum/maximum/minLength/maxLength/minItems/maxItems/minProperties/maxProperties` bound added or tightened
  (also `exclusiveMinimum/Maximum`, `multipleOf`, `uniqueItems`), pattern added or changed.
- **breaking**, beyond crdify's named checks (it only catches them as "unhandled"):
  `nullable` removed (stored nulls become invalid), a schema for map values (`additionalProperties`), list
  items or a named field added where any value was kept before (under `x-kubernetes-preserve-unknown-fields`,
  or `additionalProperties: true`): a restriction of values that were free, like a type change or an enum
  added, not an additive field (`values-restricted`), `x-kubernetes-preserve-unknown-fields` removed (unknown
  fields are pruned: silent data loss), list type changed to `set` or `map` or list-map keys changed (new
  uniqueness rules for existing lists, new merge identity for server-side apply), a subresource removed
  (controllers writing `/status` or HPAs using `/scale` fail), the CRD's kind changed.
- **warning**, where we depart from crdify's "error" on purpose:
  - CEL rule (`x-kubernetes-validations`) added or changed. Whether it rejects existing objects depends on the
    objects, not the schema: KubeRay 1.6.2 replaced `required: [jobStatus]` with a rule that accepts *more*.
    `krc diff` evaluates existing objects against the new schema, CEL included, which answers it per object.
  - enum value added: the API server accepts it, but an operator still running the old version may not
    understand the value (crdify disallows by default, OLM v1 allows).
  - version newly deprecated (clients get warnings; plan the migration), `format` added or changed (only some
    formats are enforced), list type relaxed to `atomic`, map type, `x-kubernetes-embedded-resource`,
    conversion settings, subresource added (with `/status` added, writes to the main endpoint stop changing
    status) or `/scale` paths changed, short names or categories removed or singular/list kind renamed
    (scripts using them break, objects do not), and any other keyword difference the walk does not model
    (`allOf`, `anyOf`, `oneOf`, `not`...): crdify fails closed on these ("unhandled"); we keep them visible
    but let a person judge, because every keyword that can reject or prune data has its own check here.
- **info**: new CRD, new version, version served again or undeprecated, unserved and unstored version
  removed, new optional field, field made optional, enum restriction dropped, bounds loosened, pattern
  removed, nullable added, preserve-unknown-fields added, CEL rule removed or only its message changed,
  deprecation text, printer columns, selectable fields, and description/title/example changes (crdify's
  `description` check treats them as a proxy for semantic change; OLM v1 turns it off, and a Kubernetes API
  bump rewrites hundreds of embedded descriptions, which would bury the real findings).

`compare_crds` emits exactly the checks listed in `changes.CHECKS`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .changes import CrdChange, Severity

_STRUCTURAL = frozenset({"properties", "items", "additionalProperties", "required"})
# True when a larger value is the stricter one
_BOUNDS: dict[str, bool] = {"minimum": True, "minLength": True, "minItems": True, "minProperties": True,
                            "maximum": False, "maxLength": False, "maxItems": False, "maxProperties": False}
_DOCUMENTATION = frozenset({"description", "title", "example", "externalDocs"})
_CEL = "x-kubernetes-validations"
_TYPE_KEYS = frozenset({"type", "x-kubernetes-int-or-string"})
# what Kubernetes allows beside x-kubernetes-int-or-string: part of the int-or-string type, not a separate change
_INT_OR_STRING_COMPANIONS = frozenset({"anyOf", "allOf"})
_PRESERVE = "x-kubernetes-preserve-unknown-fields"
# The yes-or-no keywords: what turning each on means (check, severity, message), then what turning it off means
_FLAGS: dict[str, tuple[tuple[str, Severity, str], tuple[str, Severity, str]]] = {
    "uniqueItems": (("bound-tightened", "breaking", "uniqueItems set: lists with duplicates become invalid"),
                    ("bound-loosened", "info", "uniqueItems unset")),
    "nullable": (("nullable-added", "info", "null is now accepted; readers must handle it"),
                 ("nullable-removed", "breaking", "null is no longer accepted: stored nulls become invalid")),
    _PRESERVE: (("preserve-unknown-fields-added", "info", "unknown fields are now kept, not pruned"),
                ("preserve-unknown-fields-removed", "breaking",
                 "unknown fields are now pruned: data not in the schema is silently dropped")),
}


def _one_line(rule: Any) -> str:
    """A CEL rule for a message: rules may span lines, report lines may not."""
    return " ".join(str(rule).split())


def _type_of(schema: Any) -> str | None:
    if not isinstance(schema, dict):
        return None
    if schema.get("x-kubernetes-int-or-string"):
        return "int-or-string"
    return schema.get("type")


class SchemaWalk:
    """Compares two schemas of one CRD version and appends a CrdChange per difference to `out`."""

    def __init__(self, crd: str, version: str, out: list[CrdChange]):
        self.crd = crd
        self.version = version
        self.out = out
        self._handlers: dict[str, Callable[[str, str, Any, Any], None]] = {
            "enum": self._enum,
            "default": self._default, "pattern": self._pattern, "format": self._format,
            "nullable": self._flag, _CEL: self._validations,
            "x-kubernetes-preserve-unknown-fields": self._flag,
            "x-kubernetes-list-type": self._list_type, "x-kubernetes-list-map-keys": self._list_map_keys,
            "x-kubernetes-map-type": self._warn_changed, "x-kubernetes-embedded-resource": self._warn_changed,
            "exclusiveMinimum": self._exclusive, "exclusiveMaximum": self._exclusive,
            "multipleOf": self._multiple_of, "uniqueItems": self._flag,
            **{key: self._bound for key in _BOUNDS}, **{key: self._documentation for key in _DOCUMENTATION},
        }

    def emit(self, path: str, check: str, severity: Severity, message: str, old: Any = None,
             new: Any = None) -> None:
        self.out.append(CrdChange(self.crd, self.version, path, check, severity, message, old, new))

    # -- the walk --------------------------------------------------------------------------------------------

    def walk(self, old: Any, new: Any, path: str = "") -> None:
        if old == new:  # one C-level comparison skips an unchanged subtree
            return
        if not isinstance(old, dict) or not isinstance(new, dict):
            self.emit(path, "unhandled-change", "warning", "schema node is not a mapping on one side", old, new)
            return
        old_type, new_type = _type_of(old), _type_of(new)
        int_or_string_toggled = (old_type == "int-or-string") != (new_type == "int-or-string")
        if old_type != new_type:  # one finding, however many of the type keywords differ
            self._type(path, old_type, new_type)
        for key in old.keys() | new.keys():
            if key in _STRUCTURAL or key in _TYPE_KEYS:
                continue
            if int_or_string_toggled and key in _INT_OR_STRING_COMPANIONS:
                continue
            before, after = old.get(key), new.get(key)
            if before != after:
                self._handlers.get(key, self._unhandled)(path, key, before, after)
        self._properties(old, new, path)
        free = bool(old.get(_PRESERVE))  # unknown values were kept, not pruned
        self._child(old.get("items"), new.get("items"), path + "[*]", "list items", free)
        self._child(old.get("additionalProperties"), new.get("additionalProperties"), path + ".*", "map values",
                    free or old.get("additionalProperties") is True)

    def _properties(self, old: dict[str, Any], new: dict[str, Any], path: str) -> None:
        before: dict[str, Any] = old.get("properties") or {}
        after: dict[str, Any] = new.get("properties") or {}
        old_required = set(old.get("required") or ())
        new_required = set(new.get("required") or ())
        prefix = path + "." if path else ""
        if before != after:
            for name, schema in before.items():
                if name not in after:
                    self.emit(prefix + name, "field-removed", "breaking",
                              "field removed: existing values are pruned and clients setting it break",
                              _type_of(schema), None)
            for name, schema in after.items():
                if name not in before:
                    if name in new_required:
                        self.emit(prefix + name, "required-field-added", "breaking",
                                  "new required field: existing objects lack it and become invalid",
                                  None, _type_of(schema))
                    elif old.get(_PRESERVE):  # the key's values were kept as they were: now they are checked
                        self.emit(prefix + name, "values-restricted", "breaking", "new field where any value was "
                                  f"kept: existing values that do not fit ({_type_of(schema) or 'its schema'}) "
                                  "become invalid", None, _type_of(schema))
                    else:
                        kind = _type_of(schema)
                        self.emit(prefix + name, "field-added", "info", f"new optional field ({kind or 'any'})",
                                  None, kind)
                else:
                    self.walk(before[name], schema, prefix + name)
        if old_required != new_required:
            for name in sorted(new_required - old_required):
                if name in before or name not in after:
                    self.emit(prefix + name, "field-now-required", "breaking",
                              "existing field is now required: objects without it become invalid", False, True)
            for name in sorted(old_required - new_required):
                if name in after:
                    self.emit(prefix + name, "field-now-optional", "info", "field is no longer required", True, False)

    def _child(self, old: Any, new: Any, path: str, what: str, free_before: bool) -> None:
        """`free_before`: the old side kept any value here (preserve-unknown-fields, additionalProperties true),
        so a schema added now restricts them; without it, unknown values were pruned and a schema keeps more."""
        if old == new:
            return
        if isinstance(old, dict) and isinstance(new, dict):
            self.walk(old, new, path)
        elif isinstance(old, dict):
            self.emit(path, "field-removed", "breaking", f"schema of the {what} removed", _type_of(old), None)
        elif isinstance(new, dict) and free_before:
            self.emit(path, "values-restricted", "breaking", f"schema of the {what} added where any value was "
                      f"kept: existing values that do not fit ({_type_of(new) or 'its schema'}) become invalid",
                      None, _type_of(new))
        elif isinstance(new, dict):
            self.emit(path, "field-added", "info", f"schema of the {what} added", None, _type_of(new))
        else:
            self._unhandled(path, "additionalProperties" if path.endswith("*") else "items", old, new)

    # -- attribute checks: (path, keyword, old value, new value), called only when the values differ ---------

    def _unhandled(self, path: str, key: str, old: Any, new: Any) -> None:
        self.emit(path, "unhandled-change", "warning", f"'{key}' changed; no specific check covers it, review it",
                  old, new)

    def _type(self, path: str, old: str | None, new: str | None) -> None:
        self.emit(path, "type-changed", "breaking", f"type changed from {old or 'unspecified'} to "
                  f"{new or 'unspecified'}: existing values and clients may no longer fit", old, new)

    def _enum(self, path: str, key: str, old: Any, new: Any) -> None:
        if old is None:
            self.emit(path, "enum-added", "breaking", "enum restriction added where any value was allowed", None, new)
            return
        if new is None:
            self.emit(path, "enum-removed", "info", "enum restriction removed: any value is allowed", old, None)
            return
        removed = [v for v in old if v not in new]
        added = [v for v in new if v not in old]
        if removed:
            self.emit(path, "enum-value-removed", "breaking",
                      f"enum values removed: {', '.join(map(str, removed))}; objects using them become invalid",
                      old, new)
        if added:
            self.emit(path, "enum-value-added", "warning",
                      f"enum values added: {', '.join(map(str, added))}; an older operator may not handle them",
                      old, new)

    def _default(self, path: str, key: str, old: Any, new: Any) -> None:
        what = "added" if old is None else "removed" if new is None else "changed"
        self.emit(path, f"default-{what}", "breaking",
                  f"default {what}: objects that omit the field change meaning when next written", old, new)

    def _bound(self, path: str, key: str, old: Any, new: Any) -> None:
        larger_is_stricter = _BOUNDS[key]
        if new is None:
            self.emit(path, "bound-loosened", "info", f"{key} {old} removed", old, None)
        elif old is None:
            self.emit(path, "bound-tightened", "breaking", f"{key} {new} added: existing values may violate it",
                      None, new)
        elif isinstance(old, (int, float)) and isinstance(new, (int, float)) and (new > old) != larger_is_stricter:
            self.emit(path, "bound-loosened", "info", f"{key} relaxed from {old} to {new}", old, new)
        else:
            self.emit(path, "bound-tightened", "breaking",
                      f"{key} tightened from {old} to {new}: existing values may violate it", old, new)

    def _exclusive(self, path: str, key: str, old: Any, new: Any) -> None:
        if new:
            self.emit(path, "bound-tightened", "breaking", f"{key} set: the bound itself is no longer allowed",
                      old, new)
        else:
            self.emit(path, "bound-loosened", "info", f"{key} unset: the bound itself is allowed", old, new)

    def _multiple_of(self, path: str, key: str, old: Any, new: Any) -> None:
        numbers = isinstance(old, (int, float)) and isinstance(new, (int, float)) and new
        if new is None or (numbers and old % new == 0):
            self.emit(path, "bound-loosened", "info", f"multipleOf relaxed from {old} to {new}", old, new)
        else:
            self.emit(path, "bound-tightened", "breaking", f"multipleOf changed from {old} to {new}: "
                      "existing values may violate it", old, new)

    def _pattern(self, path: str, key: str, old: Any, new: Any) -> None:
        if new is None:
            self.emit(path, "pattern-removed", "info", "pattern removed", old, None)
        else:
            what = "added" if old is None else "changed"
            self.emit(path, f"pattern-{what}", "breaking", f"pattern {what}: existing values may not match", old, new)

    def _format(self, path: str, key: str, old: Any, new: Any) -> None:
        if new is None:
            self.emit(path, "format-changed", "info", f"format {old} removed", old, None)
        else:
            self.emit(path, "format-changed", "warning", f"format changed from {old or 'none'} to {new}: "
                      "enforced formats reject values that do not conform", old, new)

    def _flag(self, path: str, key: str, old: Any, new: Any) -> None:
        check, severity, message = _FLAGS[key][0 if new else 1]
        self.emit(path, check, severity, message, old, new)

    def _list_type(self, path: str, key: str, old: Any, new: Any) -> None:
        if (old or "atomic") == (new or "atomic"):
            self.emit(path, "list-type-changed", "info", "list type made explicit (atomic is the default)", old, new)
        elif new in ("set", "map"):
            self.emit(path, "list-type-changed", "breaking", f"list type changed from {old or 'atomic'} to {new}: "
                      "items must now be unique and server-side apply merges differently", old, new)
        else:
            self.emit(path, "list-type-changed", "warning", f"list type changed from {old} to {new or 'atomic'}: "
                      "server-side apply now replaces the whole list", old, new)

    def _list_map_keys(self, path: str, key: str, old: Any, new: Any) -> None:
        if new is None:  # keys go with the map list type; list-type-changed reports that
            return
        self.emit(path, "list-map-keys-changed", "breaking", f"list-map keys changed from {old} to {new}: "
                  "items are matched differently and the keys must be present and unique", old, new)

    def _warn_changed(self, path: str, key: str, old: Any, new: Any) -> None:
        check = {"x-kubernetes-map-type": "map-type-changed"}.get(key, "embedded-resource-changed")
        self.emit(path, check, "warning", f"{key} changed from {old} to {new}", old, new)

    def _documentation(self, path: str, key: str, old: Any, new: Any) -> None:
        check = "description-changed" if key == "description" else "documentation-changed"
        self.emit(path, check, "info", f"{key} changed", None, None)

    def _validations(self, path: str, key: str, old: Any, new: Any) -> None:
        before = [r for r in old or () if isinstance(r, dict)]
        after = [r for r in new or () if isinstance(r, dict)]
        old_by_rule = {r.get("rule"): r for r in before}
        new_by_rule = {r.get("rule"): r for r in after}
        removed = [r for r in before if r.get("rule") not in new_by_rule]
        added = [r for r in after if r.get("rule") not in old_by_rule]
        wording = {"message", "messageExpression", "reason"}
        for rule, was in old_by_rule.items():
            now = new_by_rule.get(rule)
            if now is None or now == was:
                continue
            text = _one_line(rule)
            if all(was.get(k) == now.get(k) for k in was.keys() | now.keys() if k not in wording):
                self.emit(path, "validation-message-changed", "info", f"message of CEL rule `{text}` changed", was, now)
            else:
                self.emit(path, "validation-rule-changed", "warning", f"CEL rule `{text}` changed its options: "
                          "check existing objects against it", was, now)
        # a rule rewritten in place shows up as one removed and one added: report it as a change; the unpaired
        # rest of either list is reported as removed or added below, so the lists may differ in length
        for was, now in zip(removed, added, strict=False):
            self.emit(path, "validation-rule-changed", "warning", f"CEL rule `{_one_line(was.get('rule'))}` "
                      f"replaced by `{_one_line(now.get('rule'))}`: check existing objects against it", was, now)
        for now in added[len(removed):]:
            self.emit(path, "validation-rule-added", "warning", f"CEL rule added: `{_one_line(now.get('rule'))}`; "
                      "existing objects or updates may be rejected", None, now)
        for was in removed[len(added):]:
            self.emit(path, "validation-rule-removed", "info", f"CEL rule removed: `{_one_line(was.get('rule'))}`",
                      was, None)
