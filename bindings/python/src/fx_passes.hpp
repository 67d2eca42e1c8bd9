// The engine's pass registry in Python (graft.passes): list the passes, run one on a converted
// FX graph with options from keyword arguments, and get its report as Python data.
#pragma once

#include <pybind11/pybind11.h>

namespace graft::python {

namespace py = pybind11;

/// Defines `passes()` and `run_pass(graph, name, options)` on the extension module.
void bind_passes(py::module_& m);

}  // namespace graft::python
