// graft.plan_memory: the engine's liveness analysis and arena planner on a converted FX graph,
// the report as Python data (the fields of Lua's g:plan_memory, nodes as FX nodes, steps from 0).
#pragma once

#include <pybind11/pybind11.h>

namespace graft::python {

namespace py = pybind11;

void bind_memory(py::module_& m);

}  // namespace graft::python
