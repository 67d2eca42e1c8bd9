// Graph edits that keep use lists in sync: args, targets, replace-all-uses, erase, move.
#include <algorithm>

#include "journal.hpp"

namespace graft {

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
  touch(n);
  slots_[n].target = symbols_.intern(target);
}

Status Graph::rename(NodeId n, std::string name) {
  if (name == slots_[n].name) return Status::ok();
  if (name.empty()) return Status::node_error(slots_[n].name, "cannot rename to an empty name");
  if (name_taken(name)) return Status::node_error(slots_[n].name, "cannot rename to '" + name + "': the name is taken");
  touch(n);
  by_name_.erase(slots_[n].name, n);
  slots_[n].name = std::move(name);
  by_name_.insert(slots_[n].name, n);
  return Status::ok();
}

std::vector<NodeId> Graph::replace_all_uses_with(NodeId from, NodeId to, const std::function<bool(NodeId)>& filter) {
  std::vector<NodeId> changed;
  if (from == to || !is_alive(from) || !is_alive(to)) return changed;
  // Only the use lists of `from` and `to` change, so this is linear in the users' sizes even
  // when `from` has a hundred thousand users (a detach/attach per user would be quadratic).
  UserList kept;
  auto swap = [&](NodeId id) { return id == from ? to : id; };
  touch(from);
  touch(to);
  for (NodeId user : slots_[from].users) {
    // `to` itself may use `from` (insert relu after x, then reroute x's users to the relu):
    // rewriting it would make it use itself, so it is always skipped.
    if (user == to || (filter && !filter(user))) {
      kept.add(user);
      continue;
    }
    touch(user);
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

Status Graph::erase_node(NodeId n) {
  if (!is_alive(n)) return Status::error("erase_node: node is not in the graph");
  NodeData& d = slots_[n];
  if (!d.users.empty())
    return Status::node_error(d.name,
                              "cannot erase: still used by '" + slots_[d.users.front()].name + "'" +
                                  (d.users.size() > 1 ? " and " + std::to_string(d.users.size() - 1) + " more" : ""));
  if (insert_.anchor == n && insert_.generation == d.generation) {
    // Keep the current insertion point meaningful: after an erased node = after its predecessor.
    insert_ = d.prev != kNoNode ? after(d.prev) : d.next != kNoNode ? before(d.next) : InsertPoint::at_end();
  }
  const bool kept = journal_.p && keep_for_undo(n);
  touch(n);
  detach_inputs(n);
  unlink(n);
  by_name_.erase(d.name, n);
  if (kept) {
    retired_names_.insert(d.name);
    d.alive = false;  // the rest stays for a rollback; freed when the transaction ends
  } else {
    retired_names_.insert(std::move(d.name));
    d = NodeData{.generation = d.generation};
  }
  (ids_unique() ? held_slots_ : free_slots_).push_back(n);
  --live_count_;
  return Status::ok();
}

Status Graph::move(NodeId n, InsertPoint where) {
  if (!is_alive(n)) return Status::error("move: node is not in the graph");
  bool anchor_live = is_alive(where.anchor) && slots_[where.anchor].generation == where.generation;
  if (where.where != InsertPoint::Where::AtEnd && !anchor_live)
    return Status::node_error(slots_[n].name, "cannot move next to a node that is not in the graph");
  if (where.anchor == n) return Status::ok();
  note_moved(n);
  unlink(n);
  InsertPoint saved = insert_;
  insert_ = where;
  link(n);
  insert_ = saved;
  return Status::ok();
}

}  // namespace graft
