// Diagnostic printing and the FX spelling of op kinds.
#include "graft/status.hpp"

#include <array>

#include "graft/ir/ids.hpp"

namespace graft {

std::string Diagnostic::to_string() const {
  std::string out;
  if (!file.empty()) {
    out += file;
    if (line > 0) {
      out += ':' + std::to_string(line);
      if (column > 0) out += ':' + std::to_string(column);
    }
    out += ": ";
  }
  if (!path.empty()) out += path + ": ";
  if (!node.empty()) out += "node '" + node + "': ";
  out += message;
  return out;
}

namespace {
constexpr std::array<std::string_view, 6> kOpNames = {"placeholder", "get_attr",    "call_function",
                                                      "call_method", "call_module", "output"};
}

std::string_view op_kind_name(OpKind op) { return kOpNames[static_cast<std::size_t>(op)]; }

bool parse_op_kind(std::string_view text, OpKind& out) {
  for (std::size_t i = 0; i < kOpNames.size(); ++i) {
    if (kOpNames[i] == text) {
      out = static_cast<OpKind>(i);
      return true;
    }
  }
  return false;
}

}  // namespace graft
