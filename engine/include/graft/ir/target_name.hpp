// Reading qualified call_function targets such as `torch.ops.aten.add.Tensor`.
#pragma once

#include <string_view>

namespace graft {

/// The parts of a `torch.ops.<namespace>.<op>[.<overload>]` target.
struct OpOverloadName {
  std::string_view ns;  ///< `aten`
  std::string_view op;  ///< `add`, `add_`
  std::string_view overload;  ///< `Tensor`, `default`; empty for an overload packet
};

/// Splits an operator target; false for anything that is not under `torch.ops.`.
bool parse_op_overload(std::string_view target, OpOverloadName& out);

}  // namespace graft
