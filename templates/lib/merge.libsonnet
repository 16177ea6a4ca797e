// Deep merge with krc's layering rules, for the `raw` escape hatches:
// maps merge deeply, lists of named items (`name` or `groupName`) merge by name, other values are replaced,
// and null removes a key.
local keyOf(item) =
  if std.isObject(item) && std.objectHas(item, 'name') then item.name
  else if std.isObject(item) && std.objectHas(item, 'groupName') then item.groupName
  else null;

local isNamedList(value) =
  std.isArray(value) && std.length(value) > 0 && std.all([keyOf(item) != null for item in value]);

local merge(base, over) =
  if std.isObject(base) && std.isObject(over) then
    {
      [k]: if std.objectHas(over, k) then (if std.objectHas(base, k) then merge(base[k], over[k]) else over[k])
           else base[k]
      for k in std.setUnion(std.objectFields(base), std.objectFields(over))
      if !(std.objectHas(over, k) && over[k] == null)
    }
  else if isNamedList(base) && isNamedList(over) then
    local overByKey = { [keyOf(item)]: item for item in over };
    local baseKeys = [keyOf(item) for item in base];
    [if std.objectHas(overByKey, keyOf(item)) then merge(item, overByKey[keyOf(item)]) else item for item in base]
    + [item for item in over if !std.member(baseKeys, keyOf(item))]
  else over;

// An empty overlay returns the base untouched: Jsonnet re-evaluates object fields on each access, so merging
// nested objects needlessly multiplies the work.
{
  merge:: function(base, over) if over == null || (std.isObject(over) && std.length(over) == 0) then base else merge(base, over),
  isNamedList:: isNamedList,
}
