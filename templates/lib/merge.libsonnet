// krc's merge for the `raw` escape hatches. The rules live in one place, compiler/environment/layering.py (the
// merge of environment layers), reached through the native callback `merge`: maps merge deeply, lists of named
// items (`name` or `groupName`) merge by name, other values are replaced, and null removes a key.
// An empty overlay returns the base untouched: nothing to serialise for the callback.
{
  merge:: function(base, over)
    if over == null || (std.isObject(over) && std.length(over) == 0) then base
    else std.native('merge')(std.manifestJsonMinified(base), std.manifestJsonMinified(over)),
}
