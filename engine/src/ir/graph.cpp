// Graph: slot arena, order list, use lists, node creation, FX naming and edits.
#include "graft/ir/graph.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "graft/ir/target_name.hpp"
#include "ir/memory.hpp"
#include "journal.hpp"

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
// with dots as underscores, or the method name (a magic method's without its underscores:
// `__mul__` names `mul`).
std::string default_name(OpKind op, std::string_view target) {
  switch (op) {
    case OpKind::CallMethod:
      if (target.size() > 4 && target.starts_with("__") && target.ends_with("__"))
        return std::string(target.substr(2, target.size() - 4));
      return std::string(target);
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

NodeId Graph::reusable_fresh_slot() const {
  if (fresh_reuse_scopes_.count == 0 || unique_id_scopes_.count > 0 || !journal_.p || fresh_free_.empty())
    return kNoNode;
  const NodeId id = fresh_free_.back();
  return id >= journal_.p->slot_count ? id : kNoNode;  // else an outer transaction's
}

NodeId Graph::allocate_slot() {
  if (!fresh_free_.empty() && !journal_.p) {  // no transaction any more (or a copy of a graph in one)
    held_slots_.insert(held_slots_.end(), fresh_free_.begin(), fresh_free_.end());
    fresh_free_.clear();
  }
  if (!held_slots_.empty() && !ids_unique()) {
    free_slots_.insert(free_slots_.end(), held_slots_.begin(), held_slots_.end());
    held_slots_.clear();
  }
  NodeId id;
  if (const NodeId fresh = reusable_fresh_slot(); fresh != kNoNode) {
    id = fresh;
    fresh_free_.pop_back();
    changing(id);  // no journal saves it (it is past their slot counts); listeners hear of it
    slots_[id] = NodeData{};
  } else if (!free_slots_.empty()) {
    id = free_slots_.back();
    free_slots_.pop_back();
    changing(id);
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
  changing(n);
  if (before != kNoNode) {
    changing(before);
    if (slots_[before].prev != kNoNode) changing(slots_[before].prev);
  } else if (tail_ != kNoNode) {
    changing(tail_);
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
}

void Graph::unlink(NodeId n) {
  changing(n);
  if (slots_[n].prev != kNoNode) changing(slots_[n].prev);
  if (slots_[n].next != kNoNode) changing(slots_[n].next);
  NodeData& d = slots_[n];
  if (d.prev != kNoNode) slots_[d.prev].next = d.next;
  else head_ = d.next;
  if (d.next != kNoNode) slots_[d.next].prev = d.prev;
  else tail_ = d.prev;
  d.prev = d.next = kNoNode;
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
  changing(n);
  NodeData& d = slots_[n];
  d.inputs = collect_inputs(d);
  for (NodeId input : d.inputs) changing(input);
  for (NodeId input : d.inputs) slots_[input].users.add(n);
}

void Graph::detach_inputs(NodeId n) {
  changing(n);
  for (NodeId input : slots_[n].inputs) {
    changing(input);
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
  d.meta.set(std::move(meta));
  by_name_.insert(d.name, n);  // only once the slot exists: allocating may throw
  suffix_ceiling_.note(d.name);
  attach_inputs(n);
  if (at_end) {
    InsertPoint saved = insert_;
    insert_ = InsertPoint::at_end();
    link(n);
    insert_ = saved;
  } else {
    link(n);
  }
  inserted(n);
  return n;
}

namespace {

// FX names must be Python identifiers: other characters become '_', a leading digit gets '_'.
std::string sanitize(std::string_view hint) {
  std::string s;
  s.reserve(hint.size() + 1);
  for (char c : hint) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (s.empty()) s = "_unnamed";
  if (std::isdigit(static_cast<unsigned char>(s[0]))) s.insert(s.begin(), '_');
  return s;
}

}  // namespace

void Graph::retire_name(std::string name) {
  if (name_taken(name)) return;
  suffix_ceiling_.note(name);
  retired_names_.insert(name);
}

std::string Graph::unique_name(std::string_view hint) {
  std::string candidate = sanitize(hint);
  auto used = [&](std::string_view name) { return name_taken(name) || retired_names_.contains(name); };
  if (!used(candidate)) return candidate;
  if (!suffix_ceiling_.active()) {
    suffix_ceiling_.activate();
    for (NodeId n = 0; n < slots_.size(); ++n)
      if (slots_[n].alive) suffix_ceiling_.note(slots_[n].name);
    for (std::size_t i = 0; i < retired_names_.size(); ++i) suffix_ceiling_.note(retired_names_.name(i));
  }
  const auto [base_view, number] = detail::split_suffix(candidate);
  const std::string base(base_view);
  std::uint32_t& counter = name_counters_[base];
  if (counter < number) counter = number;
  for (;;) {
    std::string name = base + '_' + std::to_string(++counter);
    if (suffix_ceiling_.above(base, counter) || !used(name)) return name;
  }
}

// Edits that keep use lists in sync: args, targets, replace-all-uses, erase, move.

Status Graph::set_args(NodeId n, std::vector<Argument> args) {
  if (!is_alive(n)) return Status::error("set_args: node is not in the graph");
  if (Status s = check_refs(args, {}); !s) return Status::node_error(slots_[n].name, s.diagnostic().message);
  detach_inputs(n);
  slots_[n].args = std::move(args);
  attach_inputs(n);
  return Status::ok();
}

Status Graph::set_kwargs(NodeId n, Kwargs kwargs) {
  if (!is_alive(n)) return Status::error("set_kwargs: node is not in the graph");
  if (Status s = check_refs({}, kwargs); !s) return Status::node_error(slots_[n].name, s.diagnostic().message);
  detach_inputs(n);
  slots_[n].kwargs = std::move(kwargs);
  attach_inputs(n);
  return Status::ok();
}

Status Graph::set_arg(NodeId n, std::size_t index, Argument value) {
  if (!is_alive(n)) return Status::error("set_arg: node is not in the graph");
  std::vector<Argument> args = slots_[n].args;
  if (index >= args.size()) args.resize(index + 1);
  args[index] = std::move(value);
  return set_args(n, std::move(args));
}

Status Graph::set_kwarg(NodeId n, std::string_view key, Argument value) {
  if (!is_alive(n)) return Status::error("set_kwarg: node is not in the graph");
  Kwargs kwargs = slots_[n].kwargs;
  auto it = std::find_if(kwargs.begin(), kwargs.end(), [&](const auto& kv) { return kv.first == key; });
  if (it != kwargs.end()) it->second = std::move(value);
  else kwargs.emplace_back(std::string(key), std::move(value));
  return set_kwargs(n, std::move(kwargs));
}

void Graph::set_target(NodeId n, std::string_view target) {
  changing(n);
  slots_[n].target = symbols_.intern(target);
}

Status Graph::rename(NodeId n, std::string name) {
  if (name == slots_[n].name) return Status::ok();
  if (name.empty()) return Status::node_error(slots_[n].name, "cannot rename to an empty name");
  if (name_taken(name))
    return Status::node_error(slots_[n].name, "cannot rename to " + quoted_text(name) + ": the name is taken");
  changing(n);
  by_name_.erase(slots_[n].name, n);
  slots_[n].name = std::move(name);
  by_name_.insert(slots_[n].name, n);
  suffix_ceiling_.note(slots_[n].name);
  return Status::ok();
}

std::vector<NodeId> Graph::replace_all_uses_with(NodeId from, NodeId to, const std::function<bool(NodeId)>& filter) {
  std::vector<NodeId> changed;
  if (from == to || !is_alive(from) || !is_alive(to)) return changed;
  // Only the use lists of `from` and `to` change, so this is linear in the users' sizes even
  // when `from` has a hundred thousand users (a detach/attach per user would be quadratic).
  UserList kept;
  auto swap = [&](NodeId id) { return id == from ? to : id; };
  changing(from);
  changing(to);
  for (NodeId user : slots_[from].users) {
    // `to` itself may use `from` (insert relu after x, then reroute x's users to the relu):
    // rewriting it would make it use itself, so it is always skipped.
    if (user == to || (filter && !filter(user))) {
      kept.add(user);
      continue;
    }
    changing(user);
    NodeData& u = slots_[user];
    for (Argument& a : u.args) map_node_refs(a, swap);
    for (auto& kv : u.kwargs) map_node_refs(kv.second, swap);
    for (NodeId& input : u.inputs)
      if (input == from) input = to;
    slots_[to].users.add(user);
    changed.push_back(user);
  }
  slots_[from].users = std::move(kept);
  return changed;
}

Status Graph::replace_uses(std::span<const std::pair<NodeId, NodeId>> replaced) {
  std::vector<std::pair<NodeId, NodeId>> by_node(replaced.begin(), replaced.end());
  for (auto [from, to] : by_node)
    if (!is_alive(from) || !is_alive(to)) return Status::error("replace_uses: a node is not in the graph");
  std::sort(by_node.begin(), by_node.end());
  auto replacement = [&by_node](NodeId id) {
    auto it = std::lower_bound(by_node.begin(), by_node.end(), std::pair{id, NodeId{0}});
    return it != by_node.end() && it->first == id ? it->second : kNoNode;
  };
  for (std::size_t i = 0; i < by_node.size(); ++i) {
    if (i > 0 && by_node[i].first == by_node[i - 1].first)
      return Status::node_error(slots_[by_node[i].first].name, "replace_uses: replaced twice");
    if (replacement(by_node[i].second) != kNoNode)
      return Status::node_error(slots_[by_node[i].second].name, "replace_uses: both replaced and a replacement");
  }
  // Each user's arguments once; a user never comes to use itself (see replace_all_uses_with).
  std::vector<NodeId> users;
  for (auto [from, to] : replaced)
    for (NodeId user : slots_[from].users) users.push_back(user);
  std::sort(users.begin(), users.end());
  users.erase(std::unique(users.begin(), users.end()), users.end());
  for (NodeId user : users) {
    changing(user);
    auto swap = [&](NodeId id) {
      const NodeId to = replacement(id);
      return to == kNoNode || to == user ? id : to;
    };
    NodeData& u = slots_[user];
    for (Argument& a : u.args) map_node_refs(a, swap);
    for (auto& kv : u.kwargs) map_node_refs(kv.second, swap);
    for (NodeId& input : u.inputs) input = swap(input);
  }
  // Users lists as the pairs one after the other would leave them.
  for (auto [from, to] : replaced) {
    changing(from);
    changing(to);
    UserList kept;
    for (NodeId user : slots_[from].users) {
      if (user == to) kept.add(user);
      else slots_[to].users.add(user);
    }
    slots_[from].users = std::move(kept);
  }
  return Status::ok();
}

Status Graph::erase_node(NodeId n) {
  if (!is_alive(n)) return Status::error("erase_node: node is not in the graph");
  NodeData& d = slots_[n];
  if (!d.users.empty())
    return Status::node_error(d.name,
                              "cannot erase: still used by " + quoted_text(slots_[d.users.front()].name) +
                                  (d.users.size() > 1 ? " and " + std::to_string(d.users.size() - 1) + " more" : ""));
  if (insert_.anchor == n && insert_.generation == d.generation) {
    // Keep the current insertion point meaningful: after an erased node = after its predecessor.
    insert_ = d.prev != kNoNode ? after(d.prev) : d.next != kNoNode ? before(d.next) : InsertPoint::at_end();
  }
  erasing(n);
  const bool kept = journal_.p && journal_.p->last_erase_kept;
  changing(n);
  detach_inputs(n);
  unlink(n);
  order_cache_.node_erasing(*this, n);  // once `n` is out of the order, so positions read now are right
  by_name_.erase(d.name, n);
  if (kept) {
    retired_names_.insert(d.name);
    d.alive = false;  // the rest stays for a rollback; freed when the transaction ends
  } else {
    retired_names_.insert(d.name);
    d = NodeData{.generation = d.generation};
  }
  if (journal_.p && n >= journal_.p->slot_count) fresh_free_.push_back(n);
  else (ids_unique() ? held_slots_ : free_slots_).push_back(n);
  --live_count_;
  return Status::ok();
}

Status Graph::move(NodeId n, InsertPoint where) {
  if (!is_alive(n)) return Status::error("move: node is not in the graph");
  bool anchor_live = is_alive(where.anchor) && slots_[where.anchor].generation == where.generation;
  if (where.where != InsertPoint::Where::AtEnd && !anchor_live)
    return Status::node_error(slots_[n].name, "cannot move next to a node that is not in the graph");
  if (where.anchor == n) return Status::ok();
  unlink(n);
  InsertPoint saved = insert_;
  insert_ = where;
  link(n);
  insert_ = saved;
  moved(n);
  return Status::ok();
}

void Graph::reorder(const std::vector<NodeId>& sorted) {
  for (NodeId n : sorted) changing(n);
  head_ = tail_ = kNoNode;
  NodeId prev = kNoNode;
  for (NodeId n : sorted) {
    slots_[n].prev = prev;
    slots_[n].next = kNoNode;
    if (prev != kNoNode) slots_[prev].next = n;
    else head_ = n;
    prev = n;
  }
  tail_ = prev;
  reordered();
}

// The events. The order cache hears an erase once the node is unlinked (the others before it).

void Graph::inserted(NodeId n) {
  order_cache_.node_inserted(*this, n);
  for (GraphListener* l : listeners_.list) l->node_inserted(*this, n);
}

void Graph::erasing(NodeId n) {
  if (journal_.p) journal_.p->node_erasing(*this, n);
  for (GraphListener* l : listeners_.list) l->node_erasing(*this, n);
}

void Graph::moved(NodeId n) {
  if (journal_.p) journal_.p->node_moved(*this, n);
  order_cache_.node_moved(*this, n);
  for (GraphListener* l : listeners_.list) l->node_moved(*this, n);
}

void Graph::reordered() {
  if (journal_.p) journal_.p->graph_reordered(*this);
  order_cache_.graph_reordered(*this);
  for (GraphListener* l : listeners_.list) l->graph_reordered(*this);
}

void Graph::notify_journal_changing(NodeId n) { journal_.p->node_changing(*this, n); }

void Graph::remove_listener(GraphListener* l) {
  auto& v = listeners_.list;
  v.erase(std::remove(v.begin(), v.end(), l), v.end());
}

}  // namespace graft
