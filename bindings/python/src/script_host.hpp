// Lua pipelines from Python: graft.run and graft.ScriptHost (bindings/python/graft/scripts.py)
// over graft::lua::ScriptHost, on converted FX graphs.
#pragma once

#include <pybind11/pybind11.h>

namespace graft::python {

/// Adds the ScriptHost class to the native module.
void bind_script_host(pybind11::module_& m);

}  // namespace graft::python
