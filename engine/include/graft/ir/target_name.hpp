// Reading qualified call_function targets such as `torch.ops.aten.add.Tensor`, and naming
// functions the way torch.fx records them.
#pragma once

#include <string_view>
#include <vector>

namespace graft {

/// The parts of a `torch.ops.<namespace>.<op>[.<overload>]` target.
struct OpOverloadName {
  std::string_view ns;  ///< `aten`
  std::string_view op;  ///< `add`, `add_`
  std::string_view overload;  ///< `Tensor`, `default`; empty for an overload packet
};

/// Splits an operator target; false for anything that is not under `torch.ops.`.
bool parse_op_overload(std::string_view target, OpOverloadName& out);

/// torch's naming rule for an operator or method that writes to its first input: a trailing `_`
/// (`add_`, `relu_`), not a magic method (`__and__`).
bool is_inplace_name(std::string_view name);

/// The name torch.fx records for the function reached through `spelling`: torch.fx names a
/// call_function target by the function's own module and name, so
/// `torch.nn.functional.linear` is recorded as `torch._C._nn.linear`, `operator.add` as
/// `_operator.add` and `builtins.getattr` as `getattr` (engine/data/fx_target_names.txt,
/// generated from torch). Any other spelling is returned unchanged.
std::string_view fx_target_name(std::string_view spelling);

/// The spellings whose recorded name is `recorded` (`torch._C._nn.linear` gives
/// `torch.nn.functional.linear`), in the file's (sorted) order; empty when none.
std::vector<std::string_view> fx_target_spellings(std::string_view recorded);

/// The ATen operator a torch function calls, whose schemas describe its arguments
/// (`torch._C._nn.linear` and `torch.nn.functional.linear` give `aten::linear`, `torch.add`
/// gives `aten::add`), as TorchScript's builtin table says; empty for anything else. Python
/// spells the schemas' `self` as `input` in these functions.
std::string_view aten_operator_of(std::string_view target);

/// The Python signature of a torch.nn.functional function written in Python, in schema syntax
/// with namespace `python` (`torch.nn.functional.relu` gives `python::relu(Tensor input, Any
/// inplace=False) -> Any`; a spelling such as `F.threshold`'s is resolved first); empty for others.
std::string_view python_signature_text(std::string_view target);

/// Whether `name` is a Tensor method implemented in C whose arguments are those of the
/// `aten::<name>` schemas (`add`, `transpose`); false for Python wrappers whose arguments differ
/// (`split`, `norm`) and for names that are not Tensor methods.
bool is_aten_method(std::string_view name);

}  // namespace graft
