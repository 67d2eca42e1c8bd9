"""Shared helpers for the graft_fx tests."""
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHONPATH = os.path.join(REPO, "bindings", "python")


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def run_cli(*args, cwd=None):
    """python3 -m graft_fx ARGS with the package on PYTHONPATH; returns CompletedProcess."""
    env = dict(os.environ, PYTHONPATH=PYTHONPATH)
    return subprocess.run([sys.executable, "-m", "graft_fx", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)
