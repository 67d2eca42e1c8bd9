"""The torch graft supports, checked when graft or graft_fx is imported: graft reads and writes
torch.fx's internals (node meta, the graph's namespace, operator schemas), which change between
releases, so another torch is refused with a clear message instead of failing somewhere later."""
import re

SUPPORTED = (2, 14)  # torch 2.14.x
REQUIREMENT = "torch>=2.14,<2.15"


def torch_version(text):
    """(major, minor) of a torch version string ("2.14.1+cu130" -> (2, 14)), or None."""
    found = re.match(r"(\d+)\.(\d+)", text)
    return (int(found.group(1)), int(found.group(2))) if found else None


def check_torch(version=None):
    """Raises ImportError naming the installed torch and the supported range unless the
    installed torch (or `version`) is a supported release."""
    if version is None:
        import torch
        version = torch.__version__
    if torch_version(str(version)) != SUPPORTED:
        raise ImportError(f"graft supports {REQUIREMENT}, but torch {version} is installed: "
                          f"pip install 'torch==2.14.1' (tools/python-env.sh makes graft's environment)")
