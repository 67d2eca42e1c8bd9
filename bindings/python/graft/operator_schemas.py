"""The schemas of the operators registered with torch.library in this process.

graft knows torch's own aten:: and prims:: schemas (built in); a script run in process also
knows every other operator torch's dispatcher has when the script host is made, custom ops
(torch.library.custom_op, torch.library.define) included: the matcher compares their
arguments through the schema and fills omitted ones from its defaults, with no
graft.register_schema in the script.
"""
import torch

__all__ = ["registered_schemas"]

_BUILT_IN = ("aten", "prims")
_cache = (None, [])


def registered_schemas():
    """Schema texts (torch's spelling) of every operator outside aten:: and prims::."""
    global _cache
    names = torch._C._dispatch_get_all_op_names()
    if _cache[0] == len(names):  # operators are only ever added: the count says whether to look again
        return _cache[1]
    texts = []
    for qualified in sorted(names):
        if qualified.partition("::")[0] in _BUILT_IN:
            continue
        name, _, overload = qualified.partition(".")
        try:
            texts.append(str(torch._C._dispatch_find_schema_or_throw(name, overload).schema()))
        except RuntimeError:  # declared without a schema (an implementation only)
            continue
    _cache = (len(names), texts)
    return texts
