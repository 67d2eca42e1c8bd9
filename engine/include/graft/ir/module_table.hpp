// ModuleTable: FX's module hierarchy, flattened to qualified paths.
#pragma once

#include <cassert>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graft/ir/detail/heap_optional.hpp"
#include "graft/ir/detail/name_index.hpp"
#include "graft/ir/graph.hpp"
#include "graft/ir/meta.hpp"
#include "graft/ir/symbol_table.hpp"
#include "graft/status.hpp"

namespace graft {

/// A parameter or buffer: its own name within the module, its shape and dtype, and when the
/// file carries it, its value (docs/FORMAT.md §3: base64 of the raw little-endian elements).
struct TensorSpec {
  std::string name;
  Dims shape;
  InternedString dtype;
  std::optional<std::string>
      data{};  ///< base64 value (empty for no elements); none when the file describes the tensor only
  std::optional<Dims> stride{};  ///< none: row-major (contiguous)
  std::string device{};  ///< empty: cpu
  friend bool operator==(const TensorSpec&, const TensorSpec&) = default;
};

/// One module of the hierarchy.
struct ModuleInfo {
  std::string path;  ///< qualified path; "" is the root; dots separate levels
  std::string class_name;  ///< qualified class, e.g. `torch.nn.modules.linear.Linear`
  std::vector<TensorSpec> parameters;  ///< the module's own, not its children's
  std::vector<TensorSpec> buffers;
  /// The module's settings as a canonical JSON object (`{"in_features":4,...}`), when the file
  /// carries them so that an importer can rebuild the module; empty otherwise.
  std::string attributes_json{};
  /// For a module of an extracted hierarchy that stands for another module of the original model
  /// (one call of a module called several times, or a module under such a call): that module's
  /// path. Its parameters and buffers are that module's. Empty otherwise.
  std::string origin{};
  /// Why the module has no graph although its hierarchy was extracted (the trace's error), when
  /// it is opaque: called as a whole, its inputs, outputs, parameters and buffers visible.
  std::string opaque{};
  detail::HeapOptional<Graph> graph{};  ///< for modules that are GraphModules themselves
};

/// `prefix.name`, or `name` when `prefix` is empty (the root): a path or target qualified by the
/// module it is relative to.
std::string qualify(std::string_view prefix, std::string_view name);

/// Qualified path -> module, in the order modules were added.
///
/// Every change goes through add, edit and remove_if, so that a transaction (graft::Transaction
/// over a graph and its module table) undoes the table with the graph: each entry is saved once
/// per transaction, before its first change; an added entry costs no copy to undo, a removed one
/// is moved into the journal. Copying a table copies no open transaction.
class ModuleTable {
 public:
  /// Adds a module; fails if its path is already present.
  Status add(ModuleInfo info);
  /// Makes room for `count` more modules (readers know the count up front).
  void reserve(std::size_t count);
  const ModuleInfo* find(std::string_view path) const;
  /// The module at `path` to change (saved first when a transaction is open; `saved` says
  /// whether this call saved it), or nullptr. Its path must not change.
  ModuleInfo* edit(std::string_view path, bool* saved = nullptr);
  /// After an edit() that saved its entry, when the caller changed nothing after all (a
  /// submodule's graph opened for a script that left it as it was): drops that save, so the
  /// transaction does not count as a change. Only right after that edit().
  void forget_last_save();
  const std::vector<ModuleInfo>& entries() const { return entries_; }
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  /// The parameter or buffer at a full dotted path (`layer1.0.conv1.weight`), or nullptr.
  const TensorSpec* find_tensor(std::string_view qualified) const;
  /// True if `qualified` names a module, parameter or buffer.
  bool has_attribute(std::string_view qualified) const;
  /// True if `qualified` names one of a module's settings (`layer.threshold`: a key of the
  /// module's attributes), which a get_attr may read too.
  bool has_setting(std::string_view qualified) const;
  /// Removes the modules `drop` says to (never the root), keeping the others in order.
  void remove_if(const std::function<bool(const ModuleInfo&)>& drop);
  /// The modules at and under `prefix`, with paths relative to it (`prefix` itself becomes the
  /// root ""): what a graph whose targets are relative to `prefix` looks up.
  ModuleTable subtable(std::string_view prefix) const;
  /// Total number of parameter elements (symbolic dims count as 0; saturates on overflow).
  std::int64_t parameter_count() const;

  /// Transactions, nested like the graph's: rollback undoes every change since the matching
  /// begin; commit hands the changes to the enclosing transaction, if any.
  void begin_nested_transaction();
  void commit_transaction();
  void rollback_transaction();
  bool in_transaction() const { return !journal_.marks.empty(); }
  /// True if the innermost open transaction changed the table (an add, edit or removal).
  bool changed_in_transaction() const { return in_transaction() && journal_.records.size() > journal_.marks.back(); }

 private:
  struct UndoRecord {
    enum class Kind { Added, Edited, Removed } kind;
    std::size_t position;  ///< the entry's position when the change happened
    ModuleInfo saved{};  ///< Edited: the entry before; Removed: the entry removed
    std::size_t previous_record = kNoRecord;  ///< Edited: the entry's last record before this one
  };
  static constexpr std::size_t kNoRecord = static_cast<std::size_t>(-1);
  /// Empty outside transactions; a copy of a table starts with none open.
  struct Journal {
    std::vector<UndoRecord> records;
    std::vector<std::size_t> marks;  ///< records.size() when each open transaction began
    std::vector<std::size_t> last_record;  ///< per entry: its latest Edited record, or kNoRecord
    Journal() = default;
    Journal(const Journal& /*other*/) {}
    /// Assigning a table keeps the target's open transactions, which then cannot undo the
    /// assignment: refused (the module table is edited, not replaced, under a transaction).
    Journal& operator=(const Journal& /*other*/) {
      assert(marks.empty() && "a module table with an open transaction is assigned to");
      return *this;
    }
    Journal(Journal&&) noexcept = default;
    Journal& operator=(Journal&& other) noexcept {
      assert(marks.empty() && "a module table with an open transaction is assigned to");
      records = std::move(other.records);
      marks = std::move(other.marks);
      last_record = std::move(other.last_record);
      return *this;
    }
    ~Journal() = default;
  };
  void rebuild_index();

  detail::NameIndex::NameOf path_of() const {
    return [this](NodeId i) { return std::string_view(entries_[i].path); };
  }

  std::vector<ModuleInfo> entries_;
  detail::NameIndex index_;  // path -> position in entries_, over the paths entries_ holds
  Journal journal_;
};

}  // namespace graft
