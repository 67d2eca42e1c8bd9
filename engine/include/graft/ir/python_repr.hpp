// Python's spelling of IR values: numbers and strings as repr() gives them, and node arguments
// and recorded values as torch.fx prints them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "graft/ir/graph.hpp"

namespace graft {

/// Python `repr` of an argument as FX prints it (nodes by name, `'str'`, `torch.float32`).
std::string format_argument(const Graph& g, const Argument& arg);
/// The args tuple and kwargs dict, as FX's print_tabular shows them.
std::string format_args(const Graph& g, NodeId n);
std::string format_kwargs(const Graph& g, NodeId n);
/// A node's recorded value as `dtype[shape]`, tuples in parentheses; empty when none.
std::string format_value_meta(const ValueMeta& v);

namespace detail {

/// Appends a finite double as Python's repr(float) spells it (`1.0`, `1e-05`, `1e+16`).
void append_python_float(std::string& out, double v);
void append_int(std::string& out, std::int64_t v);
/// Whether `s` is well-formed UTF-8 (no overlong forms, no surrogates), as graph files must be:
/// the writer would have to change a string that is not.
bool valid_utf8(std::string_view s);
/// Appends Python's repr of a str, for reading: quotes, backslash escapes, and \xNN for control
/// characters and for bytes outside a UTF-8 sequence (a string may hold any bytes).
void append_python_str(std::string& out, std::string_view s);

}  // namespace detail
}  // namespace graft
