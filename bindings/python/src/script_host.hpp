// Lua pipelines from Python: graft.run and graft.ScriptHost (bindings/python/graft/scripts.py)
// over graft::lua::ScriptHost, on converted FX graphs.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "graft/ir/op_schema.hpp"

namespace graft::python {

/// The schemas of the operators torch.library registered (graft.operator_schemas gathers their
/// texts), over torch's built-in ones; a text graft cannot read leaves that operator unknown.
std::shared_ptr<const OpSchemaRegistry> host_schemas(const std::vector<std::string>& texts);

/// Adds the ScriptHost class to the native module.
void bind_script_host(pybind11::module_& m);

}  // namespace graft::python
