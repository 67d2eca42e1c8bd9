"""The `graft` command of an installed package (`pip install .`): runs the C++ command shipped
inside the package, with this Python for `graft verify` and the package's Lua scripts."""
import os
import sys


def package_dir():
    return os.path.dirname(os.path.abspath(__file__))


def main():
    here = package_dir()
    binary = os.path.join(here, "bin", "graft")
    if not os.access(binary, os.X_OK):
        sys.exit(f"graft: error: the graft command is not in this package ({binary}); "
                 "install graft with `pip install .` from its source tree")
    env = dict(os.environ)
    env.setdefault("GRAFT_PYTHON", sys.executable)                 # graft verify runs in this Python
    env.setdefault("GRAFT_PYTHONPATH", os.path.dirname(here))      # ... importing this package
    os.execve(binary, [binary, *sys.argv[1:]], env)


if __name__ == "__main__":
    main()
