// The pass registry: every built-in whole-graph pass declares, in its own file, its name, its
// Lua method, its options, what its report holds and a line of documentation. Lua pipelines
// (`passes = {"name"}`), the Lua graph methods, `graft pass`, `graft.passes` in Python and the
// pass reference in the docs all read this one list.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "graft/ir/graph.hpp"
#include "graft/ir/graph_module_ref.hpp"
#include "graft/ir/module_table.hpp"
#include "graft/ir/op_schema.hpp"
#include "graft/status.hpp"

namespace graft {

/// A pass's report: nothing, a flag, a count, a position, text, a node, a list or a record
/// (fields in the order the pass sets them). Each host shows it in its own terms: Lua as values
/// and tables with node handles and 1-based positions, Python and JSON with node names and
/// 0-based positions.
struct ReportValue {
  enum class Kind : std::uint8_t { Nil, Bool, Int, Position, Text, Node, List, Record };
  Kind kind = Kind::Nil;
  bool flag = false;
  std::int64_t number = 0;  ///< Int; Position (0-based)
  std::string text;
  NodeId node = kNoNode;
  std::vector<ReportValue> items;  ///< List items; Record values
  std::vector<std::string> keys;  ///< Record keys, parallel to items

  static ReportValue boolean(bool b);
  static ReportValue integer(std::int64_t n);
  static ReportValue position(std::size_t i);
  static ReportValue string(std::string s);
  static ReportValue node_ref(NodeId n);
  static ReportValue list();
  static ReportValue record();
  /// Appends to a list.
  ReportValue& add(ReportValue v);
  /// Adds a field to a record.
  ReportValue& set(std::string key, ReportValue v);
};

/// One option a pass takes: a flag, or one word of a fixed set.
struct PassOption {
  std::string_view name;
  std::vector<std::string_view> choices;  ///< empty: a flag (true or false)
  std::string_view fallback;  ///< the default as text: "true", "false" or a choice
  std::string_view doc;
};

using OptionValue = std::variant<bool, std::string>;

/// The options given to one run of a pass, checked against its declaration.
class PassOptions {
 public:
  void set(std::string name, OptionValue value);
  /// The flag `name`, or its default when it was not given.
  [[nodiscard]] bool flag(std::string_view name, bool fallback) const;
  /// The word `name`, or its default when it was not given.
  [[nodiscard]] std::string word(std::string_view name, std::string_view fallback) const;
  [[nodiscard]] const std::vector<std::pair<std::string, OptionValue>>& given() const { return values_; }

 private:
  std::vector<std::pair<std::string, OptionValue>> values_;
};

/// What a pass runs on.
struct PassContext {
  /// The graph and module table; the pass changes the table, and the graphs of the submodules in
  /// it, only through `target.editable_modules`, which the host sets where it allows that (a
  /// pipeline step, `graft pass`, `graft.passes`; under its transaction where it has one).
  GraphModuleRef target;
  const OpSchemaRegistry& schemas;
  /// False when the caller discards the report (a pipeline step): a pass may then skip
  /// building it (a report of every candidate costs as much as the pass on a large graph).
  bool wants_report = true;

  [[nodiscard]] Graph& graph() const { return *target.graph; }
  [[nodiscard]] const ModuleTable& modules() const { return target.modules_or_empty(); }
  [[nodiscard]] ModuleTable* editable_modules() const { return target.editable_modules; }
};

struct PassInfo {
  std::string_view name;  ///< in pipelines and on the command line
  std::string_view method;  ///< the Lua graph method (`g:method(options)`); empty: none is generated
  std::string_view summary;  ///< one sentence: what the pass does
  std::string_view report;  ///< what its report holds
  std::vector<PassOption> options;
  bool edits = true;  ///< false: the pass only reads the graph (a Lua method needs no writable graph)
  Result<ReportValue> (*run)(PassContext& context, const PassOptions& options) = nullptr;
};

/// Every built-in pass, in the order the docs and messages list them.
std::span<const PassInfo* const> pass_registry();

/// The pass named `name` (its pipeline name), or null.
const PassInfo* find_pass(std::string_view name);

/// "a, b, c": the names of every pass, for messages.
std::string pass_names();

/// Checks `options` against `pass`'s declaration; the error starts with `caller` and names the
/// option and what it takes.
Status check_options(const PassInfo& pass, const PassOptions& options, std::string_view caller);

/// Runs `pass` after checking its options (errors start with the pass's name).
Result<ReportValue> run_pass(const PassInfo& pass, PassContext& context, const PassOptions& options = {});

}  // namespace graft
