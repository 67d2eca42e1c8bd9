// Which storage each value uses and when it is live: the input of memory planning.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graft/ir/graph.hpp"
#include "graft/ir/module_table.hpp"
#include "graft/ir/op_schema.hpp"
#include "graft/status.hpp"

namespace graft {

enum class BufferKind : std::uint8_t { Intermediate, Input, Parameter, Output };
std::string_view buffer_kind_name(BufferKind k);

/// Which values the plan places in the arena. Inputs and parameters exist before the graph runs,
/// so by default only what the graph allocates (intermediates and outputs) is planned.
struct LivenessOptions {
  bool plan_inputs = false;  ///< placeholders
  bool plan_parameters = false;  ///< get_attr values
  bool plan_outputs = true;  ///< tensors the output node returns (live to the end)
  /// Values for the symbols of symbolic sizes (`s0` -> 32); a size naming an unbound symbol fails.
  std::vector<std::pair<std::string, std::int64_t>> symbols;
  /// The graph's module table: a `call_module` of a class known to return a fresh tensor
  /// (`torch.nn.Conv2d`, `Linear`, `BatchNorm2d`, ...; an activation whose recorded settings say
  /// `inplace`) is planned as such instead of as a call of unknown aliasing.
  const ModuleTable* modules = nullptr;
};

/// One storage allocation: a tensor a node creates (a view or an in-place result creates none).
struct Buffer {
  NodeId node = kNoNode;  ///< the node whose value allocates it
  std::uint32_t element = 0;  ///< which tensor of that value (a tuple's are numbered depth first)
  std::uint64_t bytes = 0;  ///< the storage the tensor's shape and stride reach
  std::uint32_t first = 0;  ///< the step that creates it
  std::uint32_t last = 0;  ///< the last step that reads it or a value sharing it
  BufferKind kind = BufferKind::Intermediate;
  bool planned = false;  ///< placed in the arena (LivenessOptions)
};

/// A set of buffers a value may use: the buffers it owns and those of the earlier sets it holds.
/// Values share sets (a view has its base's), and a call whose aliasing is unknown holds its
/// inputs' sets instead of copying their buffers: a chain of n such calls costs n sets of one
/// buffer, where copies would list 1 + 2 + ... + n buffers.
struct BufferSet {
  std::vector<std::uint32_t> own;  ///< buffers, ascending
  std::vector<std::uint32_t> holds;  ///< earlier sets (lower numbers), ascending, never set 0
};

/// The storage of every value of a graph, independent of the order nodes run in.
struct StorageMap {
  std::vector<Buffer> buffers;  ///< `first` and `last` unset; in graph order, then element
  /// Set 0 is empty; every other set reaches at least one buffer.
  std::vector<BufferSet> sets{1};
  /// Per node slot: the set of the buffers its value refers to (its own, the ones it views or
  /// writes, and for a call whose aliasing is unknown, its inputs' too); 0 for none.
  std::vector<std::uint32_t> value;
  /// Per node slot: the sets whose buffers running it reads or creates (`value` of it and of its
  /// inputs), ascending, without set 0.
  std::vector<std::vector<std::uint32_t>> reads;
  /// Per node slot: the buffers it allocates (a range of `buffers`).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> creates;
  /// Per node slot: 1 for calls that write their inputs without a schema saying which (an
  /// `inplace=True` call, an in-place module, a call no schema describes): reorderings keep them
  /// in place against every other use of their inputs' buffers.
  std::vector<char> may_write;
  /// Calls whose value has no recorded tensor meta: planned as one empty buffer (so that orders
  /// around it stay tracked).
  std::vector<NodeId> unsized;
  /// Calls no schema describes: their value is given its own buffers and keeps its inputs live
  /// as long as it is (it may be a view of them).
  std::vector<NodeId> unknown_aliasing;
};

/// Lists the buffers of sets of a StorageMap: a walk of the sets they hold, each set visited
/// once per call. Keep one for many calls (its marks are reused, not cleared).
class BufferSetWalker {
 public:
  explicit BufferSetWalker(const StorageMap& s) : s_(s), mark_(s.sets.size(), 0) {}
  /// The buffers of `sets` and of every set they hold, each once, in no particular order. Valid
  /// until the next call.
  const std::vector<std::uint32_t>& buffers(const std::vector<std::uint32_t>& sets);
  /// The buffers of `set` and of every set it holds, ascending, each once.
  const std::vector<std::uint32_t>& sorted_buffers(std::uint32_t set);

 private:
  const StorageMap& s_;
  std::vector<std::uint32_t> mark_;  ///< per set: the walk that last visited it
  std::uint32_t walk_ = 0;
  std::vector<std::uint32_t> stack_, out_, one_;
};

/// Reads storage from tensor meta (shape, stride, dtype) and aliasing from the operator schemas:
/// views and in-place results share their input's buffers, `getitem` of a tuple picks one
/// element's. Fails naming the node on a dtype it cannot size or a symbol with no value.
Result<StorageMap> map_storage(const Graph& g, const OpSchemaRegistry& ops, const LivenessOptions& options = {});

/// Live ranges when the nodes run in `order` (every live node once; steps are positions in it).
struct Liveness {
  std::vector<NodeId> steps;
  std::vector<Buffer> buffers;  ///< StorageMap's, with first and last set
};
Liveness live_ranges(const StorageMap& storage, const std::vector<NodeId>& order, std::size_t num_slots);

/// map_storage and live_ranges in the graph's own order.
Result<Liveness> compute_liveness(const Graph& g, const OpSchemaRegistry& ops, const LivenessOptions& options = {});

/// The largest total size of planned buffers live at one step, and the first step that has it:
/// no plan of these live ranges can use a smaller arena.
struct LivePeak {
  std::uint64_t bytes = 0;
  std::uint32_t step = 0;
};
/// `alignment` rounds each buffer up first (a plan must align every offset).
LivePeak live_peak(const Liveness& l, std::uint64_t alignment = 1);

/// `bytes` rounded up to a multiple of `alignment` (a power of two or 1).
inline std::uint64_t align_up(std::uint64_t bytes, std::uint64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

/// The value of a symbolic size (`s0`, `2*s0 + 1`, `(s0//2)*s1`) for the given symbols; fails on
/// an unbound symbol or an expression it cannot read.
Result<std::int64_t> evaluate_size(std::string_view expression,
                                   const std::vector<std::pair<std::string, std::int64_t>>& symbols);

}  // namespace graft
