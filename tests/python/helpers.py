"""Shared helpers for the graft_fx tests."""
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHONPATH = os.path.join(REPO, "bindings", "python")


def _say_the_oracle():
    # Every suite imports this module: its output names the torch it compares with.
    import torch
    print(f"[graft tests] PyTorch oracle: torch {torch.__version__} from {os.path.dirname(torch.__file__)}",
          file=sys.stderr)


_say_the_oracle()

# Under tools/test-python-asan.sh the sanitizer runtimes are preloaded into this interpreter to
# check graft's extension in process. Commands the tests start (graft, python3 -m graft_fx) are not
# what that stage checks, and a preloaded LeakSanitizer can replace their exit status with 0 when
# its exit-time scan fails: they run without it. in_process_env() gives it back to a subprocess
# that runs the extension itself (the fuzzer's worker).
_SANITIZER_PRELOAD = os.environ.get("GRAFT_SANITIZER_PRELOAD")
if _SANITIZER_PRELOAD:
    os.environ.pop("LD_PRELOAD", None)


def in_process_env(**extra):
    """The environment for a subprocess that loads graft's extension: under the ASan stage, with
    the sanitizer runtimes preloaded as in this process."""
    env = dict(os.environ, **extra)
    if _SANITIZER_PRELOAD:
        env["LD_PRELOAD"] = _SANITIZER_PRELOAD
    return env


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def run_cli(*args, cwd=None):
    """python3 -m graft_fx ARGS with the package on PYTHONPATH; returns CompletedProcess."""
    env = dict(os.environ, PYTHONPATH=PYTHONPATH)
    return subprocess.run([sys.executable, "-m", "graft_fx", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def graft_bin(test):
    """Path of the C++ `graft` command from GRAFT_BIN. Without it the test is skipped, unless
    GRAFT_REQUIRE_BIN is set (ctest sets both): then a missing binary is a failure."""
    graft = os.environ.get("GRAFT_BIN")
    if graft and os.access(graft, os.X_OK):
        return graft
    if os.environ.get("GRAFT_REQUIRE_BIN"):
        test.fail(f"GRAFT_BIN={graft!r} is not an executable graft command")
    test.skipTest("GRAFT_BIN is unset: the C++ `graft` command is not exercised")


def graft_module(test):
    """The in-process `graft` package (build/python on PYTHONPATH). Without it the test is
    skipped, unless GRAFT_REQUIRE_BIN is set (ctest): then it is a failure."""
    try:
        import graft
        return graft
    except ImportError as e:
        if os.environ.get("GRAFT_REQUIRE_BIN"):
            test.fail(f"cannot import the graft module ({e}); is build/python on PYTHONPATH?")
        test.skipTest(f"the graft module is not importable: {e}")


def assert_graft_saves_same_bytes(test, path, out):
    """The C++ `graft save` writes the graph file `path` to `out` byte for byte, and `graft lint`
    passes on it."""
    graft = graft_bin(test)
    proc = subprocess.run([graft, "save", path, "-o", out], capture_output=True, text=True)
    test.assertEqual(proc.returncode, 0, proc.stderr)
    test.assertEqual(read_bytes(out), read_bytes(path))
    lint = subprocess.run([graft, "lint", out], capture_output=True, text=True)
    test.assertEqual(lint.returncode, 0, lint.stdout + lint.stderr)
