// torch.ops target names: `torch.ops.<ns>.<op>[.<overload>]`.
#include "graft/ir/target_name.hpp"

namespace graft {

bool parse_op_overload(std::string_view target, OpOverloadName& out) {
  constexpr std::string_view kOps = "torch.ops.";
  if (target.substr(0, kOps.size()) != kOps) return false;
  std::string_view rest = target.substr(kOps.size());
  std::size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  out.ns = rest.substr(0, dot);
  rest = rest.substr(dot + 1);
  dot = rest.find('.');
  out.op = rest.substr(0, dot);
  out.overload = dot == std::string_view::npos ? std::string_view{} : rest.substr(dot + 1);
  return !out.op.empty();
}

}  // namespace graft
