// Graph: slot arena, order list, use lists and node creation.
#include "graft/ir/graph.hpp"

#include <algorithm>
#include <array>

#include "graft/ir/memory.hpp"
#include "graft/ir/target_name.hpp"

namespace graft {

namespace {

// FX refuses Python keywords and the builtins its generated code relies on as node names.
bool is_reserved_name(std::string_view name) {
  static constexpr std::array<std::string_view, 57> kReserved = {
      "False",    "None",   "True",  "and",      "as",     "assert",    "async",   "await", "break", "class",
      "continue", "def",    "del",   "elif",     "else",   "except",    "finally", "for",   "from",  "global",
      "if",       "import", "in",    "is",       "lambda", "nonlocal",  "not",     "or",    "pass",  "raise",
      "return",   "try",    "while", "with",     "yield",  "getattr",   "setattr", "len",   "range", "list",
      "tuple",    "dict",   "slice", "print",    "int",    "float",     "bool",    "str",   "type",  "object",
      "torch",    "inf",    "nan",   "NoneType", "device", "fx_pytree", "pytree"};
  return std::find(kReserved.begin(), kReserved.end(), name) != kReserved.end();
}

// FX derives a default node name from the target: the function's name, the module path
// with dots as underscores, or the method name.
std::string default_name(OpKind op, std::string_view target) {
  switch (op) {
    case OpKind::Output: return "output";
    case OpKind::CallModule:
    case OpKind::GetAttr: {
      std::string s(target);
      std::replace(s.begin(), s.end(), '.', '_');
      return s;
    }
    case OpKind::CallFunction: {
      OpOverloadName parts;
      if (parse_op_overload(target, parts)) return std::string(parts.op);  // aten.add.Tensor -> add
      std::size_t dot = target.rfind('.');
      return std::string(dot == std::string_view::npos ? target : target.substr(dot + 1));
    }
    default: return std::string(target);
  }
}

}  // namespace

NodeId Graph::find(std::string_view name) const { return by_name_.find(name, name_of()); }

NodeId Graph::output_node() const {
  for (NodeId n = tail_; n != kNoNode; n = slots_[n].prev)
    if (slots_[n].op == OpKind::Output) return n;
  return kNoNode;
}

std::vector<NodeId> Graph::node_list() const {
  std::vector<NodeId> out;
  out.reserve(live_count_);
  for (NodeId n : nodes()) out.push_back(n);
  return out;
}

const std::vector<std::uint32_t>& Graph::order_index() const {
  if (!order_valid_) {
    order_.assign(slots_.size(), kNoNode);
    std::uint32_t i = 0;
    for (NodeId n : nodes()) order_[n] = i++;
    order_valid_ = true;
  }
  return order_;
}

Status Graph::check_refs(const std::vector<Argument>& args, const Kwargs& kwargs) const {
  NodeId bad = kNoNode;
  auto check = [&](NodeId id) {
    if (bad == kNoNode && !is_alive(id)) bad = id;
  };
  for (const Argument& a : args) for_each_node_ref(a, check);
  for (const auto& kv : kwargs) for_each_node_ref(kv.second, check);
  if (bad == kNoNode) return Status::ok();
  return Status::error("argument refers to node #" + std::to_string(bad) + ", which is not in the graph");
}

void Graph::reserve(std::size_t nodes) {
  std::size_t before = slots_.capacity();
  slots_.reserve(slots_.size() + nodes);
  if (slots_.capacity() != before) detail::advise_huge_pages(slots_.data(), slots_.capacity() * sizeof(NodeData));
  by_name_.reserve(by_name_.size() + nodes);
}

NodeId Graph::allocate_slot() {
  if (!held_slots_.empty() && !ids_unique()) {
    free_slots_.insert(free_slots_.end(), held_slots_.begin(), held_slots_.end());
    held_slots_.clear();
  }
  NodeId id;
  if (!free_slots_.empty()) {
    id = free_slots_.back();
    free_slots_.pop_back();
    touch(id);
    slots_[id] = NodeData{};
  } else {
    id = static_cast<NodeId>(slots_.size());
    slots_.emplace_back();
  }
  slots_[id].alive = true;
  slots_[id].generation = ++last_generation_;
  ++live_count_;
  return id;
}

void Graph::link(NodeId n) {
  NodeId before = kNoNode;  // the node `n` goes in front of; kNoNode = append
  bool anchor_live = insert_.anchor < slots_.size() && insert_.anchor != n && slots_[insert_.anchor].alive &&
      slots_[insert_.anchor].generation == insert_.generation;
  if (!anchor_live) insert_ = InsertPoint::at_end();
  switch (insert_.where) {
    case InsertPoint::Where::AtEnd: break;
    case InsertPoint::Where::Before: before = insert_.anchor; break;
    case InsertPoint::Where::After: before = slots_[insert_.anchor].next; break;
  }
  touch(n);
  if (before != kNoNode) {
    touch(before);
    if (slots_[before].prev != kNoNode) touch(slots_[before].prev);
  } else if (tail_ != kNoNode) {
    touch(tail_);
  }
  NodeData& d = slots_[n];
  d.next = before;
  d.prev = before == kNoNode ? tail_ : slots_[before].prev;
  if (d.prev != kNoNode) slots_[d.prev].next = n;
  else head_ = n;
  if (before != kNoNode) slots_[before].prev = n;
  else tail_ = n;
  // Inserting "after" moves on to the new node, so a sequence of creates comes out in creation
  // order (FX's inserting_after would put each right after the anchor: reverse order).
  if (insert_.where == InsertPoint::Where::After) insert_ = after(n);
  bump_order();
  key_inserted(n);
}

namespace {
constexpr std::uint64_t kKeyGap = std::uint64_t{1} << 20;  // room for 20 halvings at one spot
}

void Graph::renumber_keys() const {
  keys_.assign(slots_.size(), 0);
  std::uint64_t k = 0;
  for (NodeId n : nodes()) keys_[n] = (k += kKeyGap);
  keys_valid_ = true;
}

void Graph::key_inserted(NodeId n) {
  if (!keys_valid_) return;  // renumbered when next asked
  if (keys_.size() < slots_.size()) keys_.resize(slots_.size(), 0);
  const NodeData& d = slots_[n];
  const std::uint64_t lo = d.prev == kNoNode ? 0 : keys_[d.prev];
  if (d.next == kNoNode) {
    keys_[n] = lo + kKeyGap;
    return;
  }
  const std::uint64_t hi = keys_[d.next];
  if (hi - lo < 2) {
    keys_valid_ = false;  // no room left here
    return;
  }
  keys_[n] = lo + (hi - lo) / 2;
}

void Graph::unlink(NodeId n) {
  touch(n);
  if (slots_[n].prev != kNoNode) touch(slots_[n].prev);
  if (slots_[n].next != kNoNode) touch(slots_[n].next);
  NodeData& d = slots_[n];
  if (d.prev != kNoNode) slots_[d.prev].next = d.next;
  else head_ = d.next;
  if (d.next != kNoNode) slots_[d.next].prev = d.prev;
  else tail_ = d.prev;
  d.prev = d.next = kNoNode;
  bump_order();
}

NodeIdList Graph::collect_inputs(const NodeData& d) {
  std::size_t count = 0;
  auto tally = [&](NodeId) { ++count; };
  for (const Argument& a : d.args) for_each_node_ref(a, tally);
  for (const auto& kv : d.kwargs) for_each_node_ref(kv.second, tally);
  NodeIdList inputs;
  inputs.reserve(count);
  auto add = [&](NodeId input) { inputs.push_back(input); };
  for (const Argument& a : d.args) for_each_node_ref(a, add);
  for (const auto& kv : d.kwargs) for_each_node_ref(kv.second, add);
  return inputs;
}

void Graph::attach_inputs(NodeId n) {
  touch(n);
  NodeData& d = slots_[n];
  d.inputs = collect_inputs(d);
  for (NodeId input : d.inputs) touch(input);
  for (NodeId input : d.inputs) slots_[input].users.add(n);
}

void Graph::detach_inputs(NodeId n) {
  touch(n);
  for (NodeId input : slots_[n].inputs) {
    touch(input);
    slots_[input].users.remove(n);
  }
  slots_[n].inputs.clear();
}

NodeId Graph::create_node(OpKind op, std::string_view target, std::vector<Argument> args, Kwargs kwargs,
                          std::string_view name) {
  std::string hint = name.empty() ? default_name(op, target) : std::string(name);
  std::string unique = unique_name(is_reserved_name(hint) ? hint + "_1" : hint);
  Result<NodeId> r = create_node_named(op, target, std::move(args), std::move(kwargs), std::move(unique));
  return r ? r.value() : kNoNode;  // the name is unique, so only a bad reference can fail
}

Result<NodeId> Graph::create_node_named(OpKind op, std::string_view target, std::vector<Argument> args, Kwargs kwargs,
                                        std::string name) {
  return add_node(op, symbols_.intern(target), std::move(args), std::move(kwargs), std::move(name), {}, false);
}

Result<NodeId> Graph::append_node(OpKind op, Symbol target, std::vector<Argument> args, Kwargs kwargs, std::string name,
                                  NodeMeta meta) {
  if (target >= symbols_.size())
    return Status::error("append_node: target symbol #" + std::to_string(target) + " is not in this graph");
  return add_node(op, target, std::move(args), std::move(kwargs), std::move(name), std::move(meta), true);
}

Result<NodeId> Graph::add_node(OpKind op, Symbol target, std::vector<Argument> args, Kwargs kwargs, std::string name,
                               NodeMeta meta, bool at_end) {
  if (name.empty()) return Status::error("node name is empty");
  if (Status s = check_refs(args, kwargs); !s) return s;
  if (name_taken(name)) return Status::node_error(name, "duplicate node name");
  NodeId n = allocate_slot();
  NodeData& d = slots_[n];
  d.name = std::move(name);
  d.op = op;
  d.target = target;
  d.args = std::move(args);
  d.kwargs = std::move(kwargs);
  d.meta = std::move(meta);
  by_name_.insert(d.name, n);  // only once the slot exists: allocating may throw
  attach_inputs(n);
  if (!at_end) {
    link(n);
    return n;
  }
  InsertPoint saved = insert_;
  insert_ = InsertPoint::at_end();
  link(n);
  insert_ = saved;
  return n;
}

}  // namespace graft
