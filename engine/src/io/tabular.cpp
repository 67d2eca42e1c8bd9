// torch.fx's print_tabular table.
#include "graft/io/tabular.hpp"

#include <algorithm>
#include <array>

#include "graft/ir/python_repr.hpp"

namespace graft {

std::string tabular(const Graph& g, bool with_values) {
  const std::size_t cols = with_values ? 6 : 5;
  std::vector<std::array<std::string, 6>> rows;
  rows.push_back({"opcode", "name", "target", "args", "kwargs", "value"});
  for (NodeId n : g.nodes())
    rows.push_back({std::string(op_kind_name(g.op(n))), g.name(n), g.target(n), format_args(g, n), format_kwargs(g, n),
                    with_values ? format_value_meta(g.meta(n).tensor_meta) : std::string()});
  std::array<std::size_t, 6> width{};
  for (const auto& row : rows)
    for (std::size_t c = 0; c < cols; ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  auto emit = [&](const std::array<std::string, 6>& row) {
    std::string line;
    for (std::size_t c = 0; c < cols; ++c) {
      if (c) line += "  ";
      line += row[c];
      if (c + 1 < cols) line.append(width[c] - row[c].size(), ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  };
  emit(rows[0]);
  std::array<std::string, 6> rule;
  for (std::size_t c = 0; c < cols; ++c) rule[c] = std::string(width[c], '-');
  emit(rule);
  for (std::size_t r = 1; r < rows.size(); ++r) emit(rows[r]);
  return out;
}

}  // namespace graft
