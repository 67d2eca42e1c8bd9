#!/usr/bin/env bash
# `pip install .` into a new virtual environment, then from another folder: `graft --help`,
# `graft run` with a shipped script, `python -m graft_fx --help`, `import graft` and
# graft.fx.replace_pattern on a traced model (checked against torch.fx's own result).
# The new environment sees graft's torch through a .pth file, so pip finds torch 2.14.1
# installed and downloads nothing; the build itself runs as pip runs it, isolated, with
# scikit-build-core and pybind11 from the package index.
# Usage: pip_install_test.sh SOURCE_DIR GRAFT_ENV_PYTHON
set -euo pipefail
src="$1"
env_python="$2"
work="$(mktemp -d /tmp/graft-pip-XXXXXX)"
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -m venv "$work/venv"
site="$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
"$env_python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' >"$site/graft-test-torch.pth"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$src" 2>&1 |
  grep -v "^WARNING: Location 'file:" || true
"$work/venv/bin/python" -c 'import graft' # the install worked at all
mkdir "$work/elsewhere"
cd "$work/elsewhere"
export PATH="$work/venv/bin:$PATH" SRC="$src"
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(command -v graft)" = "$work/venv/bin/graft" ] || fail "graft is not the environment's command"
graft --help | grep -q "Usage:" || fail "graft --help"
python -m graft_fx --help | grep -q "export" || fail "python -m graft_fx --help"
# a shipped script found inside the package: require("passes.remove_detach")
cat >pipeline.lua <<'LUA'
return graft.pipeline { name = "p", passes = { require("passes.remove_detach") } }
LUA
graft run pipeline.lua "$src/examples/graphs/resnet18.aten.json" -o out.json >run.txt || fail "graft run: $(cat run.txt)"
grep -q "ok:" run.txt || fail "graft run did not say ok: $(cat run.txt)"
[ -s out.json ] || fail "graft run wrote nothing"
python - <<'PY' || fail "graft.fx.replace_pattern"
import os, torch, torch.fx, graft, graft.fx
here = os.path.dirname(graft.__file__)
assert not here.startswith(os.environ.get("SRC", "/nonexistent")), here  # the installed package
class M(torch.nn.Module):
    def forward(self, x, y):
        return torch.relu(torch.add(x, y)) * 2
def pattern(a, b):
    return torch.relu(torch.add(a, b))
def replacement(a, b):
    return torch.nn.functional.gelu(torch.sub(a, b))
ours, theirs = torch.fx.symbolic_trace(M()), torch.fx.symbolic_trace(M())
a = graft.fx.replace_pattern(ours, pattern, replacement)
b = torch.fx.replace_pattern(theirs, pattern, replacement)
assert len(a) == len(b) == 1, (a, b)
assert str(ours.graph) == str(theirs.graph), (ours.graph, theirs.graph)
x, y = torch.randn(3), torch.randn(3)
assert torch.equal(ours(x, y), theirs(x, y))
print("replace_pattern ok:", graft.__file__)
PY
echo "pip install . : ok"
