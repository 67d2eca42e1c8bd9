// Graph text: a compact, hand-writable notation for a graph's structure, one node per line in
// graph order, for tests and for reading graphs in a terminal:
//
//   x = placeholder
//   w = get_attr linear.weight
//   mm = call_function torch.mm(x, w)
//   t = call_method transpose(mm, 0, 1)
//   relu = call_function torch.relu(t, inplace=False)
//   return (relu, mm)
//
// `name = op target(args, key=value, ...)`; a placeholder's target is its name unless written;
// the parentheses may be left out when there are no arguments; `return VALUE` is the output
// node. Values are spelled as torch.fx prints them: node names, None, True, False, ints, floats
// (inf, nan), 'strings' (Python escapes), torch.float32 and the other torch enums,
// device(type='cuda', index=0), [lists], (tuples,), {dicts: ...}, slice(a, b, c). Blank lines
// and text after `#` are ignored. Metadata is not part of the notation.
#pragma once

#include <string>
#include <string_view>

#include "graft/ir/graph.hpp"
#include "graft/status.hpp"

namespace graft {

/// The graph in the notation above; parse_graph_text(to_graph_text(g)) has g's structure.
std::string to_graph_text(const Graph& g);

/// Reads the notation; errors name `source`, the line and the column.
Result<Graph> parse_graph_text(std::string_view text, std::string_view source = "<text>");

}  // namespace graft
