// Operator schemas: TorchScript schema strings as torch prints them
// (`aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`), parsed, and a
// registry of torch's own ATen schemas embedded at build time (engine/data/aten_schemas.txt,
// written by tools/gen_schemas.py), so passes can read argument names, kinds and defaults the
// way Python reads `torch.ops.aten.add.Tensor._schema.arguments`.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graft/ir/symbol_table.hpp"
#include "graft/status.hpp"

namespace graft {

/// One argument or return of a schema. Types and defaults are kept as written: the registry is
/// for reading schemas and matching arguments, not for evaluating TorchScript types.
struct SchemaArgument {
  std::string name;  ///< `self`; empty for an unnamed return
  /// As written, alias annotation included: `Tensor`, `Scalar`, `int[1]?`, `Tensor(a!)`,
  /// `Tensor(a -> *)`, `Dict(str, t)(a!)`, `(Tensor, t)[]`.
  std::string type;
  bool kwarg_only = false;  ///< after the `*` marker: can only be passed by keyword
  /// As written after `=`: `1`, `None`, `[]`, `False`, `"valid"` (quotes kept), `1e-05`.
  /// Note torch prints an `int[N]` default whose items are all equal as one number
  /// (`int[2] stride=1` means `[1, 1]`).
  std::optional<std::string> default_value;

  /// The type is a single Tensor, with or without an alias annotation (`Tensor`, `Tensor(a!)`,
  /// `Tensor(a -> *)`); not `Tensor[]`, `Tensor?` or `Tensor(a)[]`.
  bool is_tensor() const;
  /// The alias annotation says the operator writes through this value (`Tensor(a!)`,
  /// `Tensor(a!)[]`, `t[](a!)`), as torch's `alias_info.is_write`.
  bool is_mutable() const;
};

/// A parsed operator schema.
struct OpSchema {
  std::string ns;  ///< `aten`
  std::string name;  ///< `add`, `add_`, `__and__`
  std::string overload;  ///< `Tensor`; empty for the default overload
  std::vector<SchemaArgument> arguments;
  std::vector<SchemaArgument> returns;
  bool is_vararg = false;  ///< the arguments end with `...` (`aten::format(str self, ...)`)
  bool is_varret = false;  ///< the returns end with `...`
  std::string text;  ///< the schema as given, surrounding whitespace removed

  /// `torch.ops.aten.add.Tensor`; the empty overload is spelled `default`, as torch.fx does.
  std::string qualified_target() const;
  /// The argument named `name`, or null. (Linear: schemas have a handful of arguments.)
  const SchemaArgument* find_argument(std::string_view name) const;
  /// Some argument is written through (torch's `FunctionSchema.is_mutable`).
  bool is_mutable() const;
};

/// Parses one schema. Errors carry the 1-based column in `Diagnostic::column` and name it in
/// the message: `column 27: expected ',' or ')' after argument 'other', found '='`.
Result<OpSchema> parse_op_schema(std::string_view text);

/// The schema in torch's own spelling (`str(schema)`): for every schema torch prints,
/// `to_string(parse_op_schema(s).value()) == s`.
std::string to_string(const OpSchema& schema);

/// Schemas by qualified target. Deterministic: the contents depend only on the texts added, in
/// order. Pointers returned by `find` stay valid while the registry lives, across `add_text`.
/// A registry may extend a base (usually `builtin()`): lookups fall through to it, and a schema
/// the base already has cannot be added again.
class OpSchemaRegistry {
 public:
  OpSchemaRegistry() = default;
  /// An empty registry over `base`, which must outlive it.
  explicit OpSchemaRegistry(const OpSchemaRegistry* base) : base_(base) {}
  /// An empty registry over `base`, which it keeps alive.
  explicit OpSchemaRegistry(std::shared_ptr<const OpSchemaRegistry> base)
      : base_(base.get()), owned_base_(std::move(base)) {}

  /// torch's aten:: and prims:: schemas (engine/data/aten_schemas.txt, embedded in the
  /// library), parsed on first use; safe to call from several threads.
  static const OpSchemaRegistry& builtin();

  /// Adds one schema per line; blank lines and lines starting with `#` are skipped. All or
  /// nothing: on a malformed line or a schema already present, nothing is added and the error
  /// names `origin:line:column`.
  Status add_text(std::string_view text, std::string_view origin);

  /// The schema of `torch.ops.aten.add.Tensor` (a torch.fx target), also spelled
  /// `aten::add.Tensor` (torch's schema name), `aten.add.Tensor` (`str(OpOverload)`), and for
  /// the default overload `torch.ops.aten.relu.default` or `aten::relu`. Null when unknown,
  /// including for an overload packet such as `torch.ops.aten.add`.
  const OpSchema* find(std::string_view target) const;

  /// Every overload of an operator (`aten::add` gives add.Tensor, add.Scalar, add.out, ...):
  /// this registry's in the order added, then its base's.
  std::vector<const OpSchema*> overloads(std::string_view op_name) const;

  /// The schemas added to this registry (not its base's).
  std::size_t size() const { return schemas_.size(); }
  /// The `i`th schema added to this registry, in the order added.
  const OpSchema& schema(std::size_t i) const { return schemas_.at(i); }
  const OpSchemaRegistry* base() const { return base_; }

  /// Whether calling `target` has an effect beyond its result that no schema annotation shows
  /// (torch.fx's `_side_effectful_functions`: `torch._assert`, profiler ranges). The builtin
  /// registry knows torch's; `add_side_effect` adds more.
  bool has_side_effects(std::string_view target) const;
  void add_side_effect(std::string target) { side_effects_.insert(std::move(target)); }

  /// Whether torch tags the operator `target` names with `tag` (engine/data/aten_tags.txt:
  /// `nondeterministic_seeded` for random ops, `inplace_view`, `dynamic_output_shape`, ...),
  /// in any spelling `find` accepts.
  bool has_tag(std::string_view target, std::string_view tag) const;
  /// Tags `target` (any spelling `find` accepts, resolved to the torch.fx target).
  void add_tag(std::string_view target, std::string_view tag);
  /// A random operator (`nondeterministic_seeded`): two calls give different values, so they
  /// are never merged, and an unused one still advances the generator.
  bool is_random(std::string_view target) const { return has_tag(target, "nondeterministic_seeded"); }

 private:
  const OpSchema* find_here(std::string_view target) const;

  const OpSchemaRegistry* base_ = nullptr;
  std::shared_ptr<const OpSchemaRegistry> owned_base_;
  std::set<std::string, std::less<>> side_effects_;
  std::set<std::string, std::less<>> tags_;  // "<torch.fx target> <tag>"
  std::deque<OpSchema> schemas_;  // deque: `find` hands out pointers, which growth keeps valid
  std::unordered_map<std::string, std::size_t, StringHash, std::equal_to<>> by_target_;
  std::unordered_map<std::string, std::vector<std::size_t>, StringHash, std::equal_to<>> by_op_;  // `aten::add`
};

}  // namespace graft
