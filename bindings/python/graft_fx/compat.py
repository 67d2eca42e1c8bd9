"""Compatibility fixes for the installed torch (1.13) on newer Pythons."""
import dis
import inspect
import sys

import torch.fx.proxy

_PATCHED = False


def _proxy_iter(self):
    # torch 1.13 finds the calling instruction as insts[f_lasti // 2], which is wrong on
    # Python >= 3.11 (hidden CACHE entries shift the indices), so `a, b = proxy` fails with
    # "Proxy object cannot be iterated". Match the instruction by byte offset instead.
    frame = inspect.currentframe()
    assert frame is not None
    caller = frame.f_back
    assert caller is not None
    for inst in dis.get_instructions(caller.f_code):
        if inst.offset == caller.f_lasti:
            if inst.opname == "UNPACK_SEQUENCE":
                return (self[i] for i in range(inst.argval))
            break
    return self.tracer.iter(self)


def install():
    """Patch torch.fx.Proxy.__iter__ when the running Python needs it (idempotent)."""
    global _PATCHED
    if _PATCHED or sys.version_info < (3, 11):
        return
    torch.fx.proxy.Proxy.__iter__ = _proxy_iter
    _PATCHED = True
