"""The rest of a torch.fx module under graft.fx's mirror of it: names graft's module does not
define (torch's private helpers too, which torch's own tests and some passes import) resolve to
torch 2.14's objects, so `from graft.fx.X import name` works wherever `from torch.fx.X import
name` does."""
import importlib


def torch_fallback(graft_name: str, torch_name: str):
    """A module `__getattr__` (PEP 562) for graft's module `graft_name`: a submodule graft
    mirrors is graft's; any other name is looked up in torch's module `torch_name`."""
    def __getattr__(name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module {graft_name!r} has no attribute {name!r}")
        try:
            return importlib.import_module(f"{graft_name}.{name}")
        except ModuleNotFoundError as e:
            if e.name not in (f"{graft_name}.{name}", graft_name):
                raise
        try:
            return getattr(importlib.import_module(torch_name), name)
        except AttributeError:
            raise AttributeError(f"module {graft_name!r} has no attribute {name!r} "
                                 f"(nor has {torch_name!r})") from None
    return __getattr__
