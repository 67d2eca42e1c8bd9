// ModuleTable: FX's module hierarchy, flattened to qualified paths.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graft/ir/detail/name_index.hpp"
#include "graft/ir/meta.hpp"
#include "graft/ir/symbol_table.hpp"
#include "graft/status.hpp"

namespace graft {

class Graph;

/// A parameter or buffer: its own name within the module, its shape and dtype, and when the
/// file carries it, its value (docs/FORMAT.md §3: base64 of the raw little-endian elements).
struct TensorSpec {
  std::string name;
  Dims shape;
  InternedString dtype;
  std::optional<std::string>
      data{};  ///< base64 value (empty for no elements); none when the file describes the tensor only
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
  std::unique_ptr<Graph> graph;  ///< for modules that are GraphModules themselves

  ModuleInfo() = default;
  ModuleInfo(const ModuleInfo& other);
  ModuleInfo& operator=(const ModuleInfo& other);
  ModuleInfo(ModuleInfo&&) noexcept = default;
  ModuleInfo& operator=(ModuleInfo&&) noexcept = default;
  ~ModuleInfo();
};

/// `prefix.name`, or `name` when `prefix` is empty (the root): a path or target qualified by the
/// module it is relative to.
std::string qualify(std::string_view prefix, std::string_view name);

/// Qualified path -> module, in the order modules were added.
class ModuleTable {
 public:
  /// Adds a module; fails if its path is already present.
  Status add(ModuleInfo info);
  /// Makes room for `count` more modules (readers know the count up front).
  void reserve(std::size_t count);
  const ModuleInfo* find(std::string_view path) const;
  ModuleInfo* find(std::string_view path);
  const std::vector<ModuleInfo>& entries() const { return entries_; }
  std::vector<ModuleInfo>& entries() { return entries_; }
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

 private:
  detail::NameIndex::NameOf path_of() const {
    return [this](NodeId i) { return std::string_view(entries_[i].path); };
  }

  std::vector<ModuleInfo> entries_;
  detail::NameIndex index_;  // path -> position in entries_, over the paths entries_ holds
};

}  // namespace graft
