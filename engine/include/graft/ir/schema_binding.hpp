// A call's arguments read through an operator schema, as Python binds a call to a signature:
// which value each parameter gets, what an omitted one defaults to, and whether a value can be
// of a parameter's type (to tell overloads apart).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graft/ir/argument.hpp"
#include "graft/ir/graph.hpp"
#include "graft/ir/op_schema.hpp"

namespace graft {

/// The value a schema default stands for, for the defaults torch prints simply: None,
/// True/False, integers, floats, quoted strings, int lists (`int[2] stride=1` means [1, 1]), and
/// memory formats, dtypes and layouts, which torch prints as their enum number
/// (`memory_format=0` is `torch.contiguous_format`). Others give nothing.
std::optional<Argument> schema_default(const SchemaArgument& a);

/// One slot per schema argument: the value the call passes, or nothing where it omits it.
using BoundArguments = std::vector<std::optional<Argument>>;

/// Binds `args` and `kwargs` to `schema`'s arguments: positional items to the leading arguments
/// that are not keyword-only, keywords by name. Returns false, with the reason in `why`, for
/// more positional items than the schema takes, an unknown keyword, or an argument given both
/// ways. Omitted arguments stay empty, required or not. With `python_names`, the keyword
/// `input` binds the schema's `self` (torch's Python functions spell it so: `torch.add(input=x, ...)`).
/// With `int_list_varargs` (Python calls: methods and torch functions), a schema whose one
/// positional argument after `self` is an int list takes it as varargs, as Python does:
/// `x.view(2, -1)` binds `size` to `[2, -1]`, `x.view(6)` to `[6]`.
bool bind_arguments(const OpSchema& schema, const std::vector<Argument>& args, const Kwargs& kwargs,
                    BoundArguments& out, std::string* why = nullptr, bool python_names = false,
                    bool int_list_varargs = false);

/// A schema type without its alias annotation: `Tensor(a!)` -> `Tensor`, `Tensor(a)[]` ->
/// `Tensor[]`, `t[](a!)` -> `t[]`. Two arguments that differ only there take the same values.
std::string without_alias(std::string_view type);

/// The same parameter in two schemas: name, keyword-only and type, alias annotation aside
/// (`add.Tensor`'s `self` and `add_.Tensor`'s `Tensor(a!) self`).
bool same_parameter(const SchemaArgument& a, const SchemaArgument& b);

/// Whether `value` can be passed where `type` is expected (`Tensor`, `int[2]`, `Scalar?`,
/// `Tensor(a!)`), as far as a graph argument shows: a number may be a Tensor (torch wraps it),
/// a Scalar or a float; None only an optional; a node whose recorded meta in `g` says it is a
/// tensor only a tensor, any other node anything. Unknown types accept anything.
bool argument_fits(const Argument& value, std::string_view type, const Graph* g = nullptr);

/// The Python signature of a torch.nn.functional function written in Python, as a schema
/// (`python::relu(Tensor input, Any inplace=False) -> Any`), or null (target_name.hpp).
const OpSchema* python_signature(std::string_view target);

/// The schemas that may describe a call: for call_function, the overload a `torch.ops` target
/// names, every overload of an overload packet (`torch.ops.aten.add`) or of the ATen operator a
/// torch function calls (`torch.add`, `torch._C._nn.linear`; `python_names` is then set), or
/// the Python signature of a torch.nn.functional function (`F.relu`, `F.softmax`); for
/// call_method, every overload of `aten::<method>` when the method takes ATen's arguments
/// (`is_aten_method`; the receiver is `self`).
struct CallSchemas {
  std::vector<const OpSchema*> candidates;
  bool python_names = false;
  bool int_list_varargs = false;  ///< Python's call rules: an int list may come as varargs
};
CallSchemas schemas_for_call(const OpSchemaRegistry& registry, OpKind op, std::string_view target);

/// A schema a call binds to: every value given fits its argument's type and every required
/// argument is given.
struct BoundCall {
  const OpSchema* schema = nullptr;
  BoundArguments values;
};

/// The candidates of `schemas_for_call` that node `n` of `g` binds to, in the registry's order.
/// Empty when none does; `why` then says why the first candidate refused (if there was one).
std::vector<BoundCall> bind_call(const OpSchemaRegistry& registry, const Graph& g, NodeId n,
                                 std::string* why = nullptr);

}  // namespace graft
