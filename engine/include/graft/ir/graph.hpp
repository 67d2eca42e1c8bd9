// Graph: FX's node list as a tombstoned slot arena with use lists.
//
// Nodes live in slots addressed by NodeId. Erasing a node tombstones its slot; a later node may
// reuse the slot, with a generation no node of this graph had before, so a StampedId (slot and
// generation) held elsewhere can tell it went stale. While a transaction or a UniqueIdScope is
// open, erased slots are not reused at all, so maps keyed by bare NodeIds inside a rewrite
// cannot land on a node created after the one they meant; code that keeps no such id may open
// a FreshSlotReuse, and slots a transaction created and erased are then used again in it.
// The nodes also form a doubly linked list: FX's total order, which lint checks is topological.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graft/ir/argument.hpp"
#include "graft/ir/detail/name_index.hpp"
#include "graft/ir/detail/order_cache.hpp"
#include "graft/ir/graph_diff.hpp"
#include "graft/ir/graph_listener.hpp"
#include "graft/ir/ids.hpp"
#include "graft/ir/meta.hpp"
#include "graft/ir/small_vector.hpp"
#include "graft/ir/symbol_table.hpp"
#include "graft/ir/user_list.hpp"
#include "graft/status.hpp"

namespace graft {

class ModuleTable;

/// A node's inputs: most nodes have at most four, kept in place.
using NodeIdList = SmallVector<NodeId, 4>;

/// The storage of one node. Read it through Graph; change it only through Graph's edit API,
/// which keeps `inputs` and `users` in sync with `args` and `kwargs`.
struct NodeData {
  std::string name{};
  Symbol target = 0;
  OpKind op = OpKind::CallFunction;
  bool alive = false;
  std::uint32_t generation = 0;  ///< unique per creation in this graph; kept by the tombstone
  NodeId prev = kNoNode;
  NodeId next = kNoNode;
  std::vector<Argument> args{};
  Kwargs kwargs{};
  SharedMeta meta{};
  NodeIdList inputs{};  ///< node references in args then kwargs, in order, repeats kept
  UserList users{};  ///< distinct consumers, in the order they started using this node
};

/// Where `create_node` puts new nodes (FX's `inserting_before` / `inserting_after`).
/// Unlike FX, whose `inserting_after(n)` puts every new node right after `n` (so a sequence
/// of creates comes out in reverse), After advances past each created node: creation order.
/// An insertion point whose anchor has since been erased appends at the end, where lint
/// reports the misplaced node, instead of linking into a dead slot.
struct InsertPoint {
  enum class Where : std::uint8_t { AtEnd, Before, After };
  Where where = Where::AtEnd;
  NodeId anchor = kNoNode;
  std::uint32_t generation = 0;  ///< the anchor's generation when the point was made
  static InsertPoint at_end() { return {}; }
};

class Graph {
 public:
  Graph() = default;

  // --- reading -------------------------------------------------------------------------------
  std::size_t size() const { return live_count_; }  ///< live nodes
  std::size_t num_slots() const { return slots_.size(); }  ///< slots, live or not (BGL's num_vertices)
  bool is_alive(NodeId n) const { return n < slots_.size() && slots_[n].alive; }
  const NodeData& node(NodeId n) const { return slots_[n]; }
  std::uint32_t generation(NodeId n) const { return slots_[n].generation; }
  /// Nodes this graph has created so far (each takes a new generation), reused slots included.
  std::uint32_t nodes_created() const { return last_generation_; }
  /// A reference to live node `n` that cannot be mistaken for a later node in its slot.
  StampedId stamp(NodeId n) const { return {n, slots_[n].generation}; }
  /// The node `r` refers to, or kNoNode if it was erased since.
  NodeId resolve(StampedId r) const {
    return is_alive(r.id) && slots_[r.id].generation == r.generation ? r.id : kNoNode;
  }
  /// True while erased slots are kept from reuse (a transaction or a UniqueIdScope is open).
  bool ids_unique() const { return journal_.p != nullptr || unique_id_scopes_.count > 0; }

  OpKind op(NodeId n) const { return slots_[n].op; }
  const std::string& name(NodeId n) const { return slots_[n].name; }
  const std::string& target(NodeId n) const { return symbols_.text(slots_[n].target); }
  Symbol target_symbol(NodeId n) const { return slots_[n].target; }
  const std::vector<Argument>& args(NodeId n) const { return slots_[n].args; }
  const Kwargs& kwargs(NodeId n) const { return slots_[n].kwargs; }
  const NodeMeta& meta(NodeId n) const { return slots_[n].meta.get(); }
  /// Metadata is not part of the use-def structure, so it may be edited freely. Write through
  /// the reference at once: it is only valid until the next edit, copy or transaction end.
  NodeMeta& edit_meta(NodeId n) {
    changing(n);
    return slots_[n].meta.edit();
  }
  /// Gives `n` the metadata of node `m` of `from` (which may be this graph), shared until edited.
  void copy_meta(NodeId n, const Graph& from, NodeId m) {
    changing(n);
    slots_[n].meta = from.slots_[m].meta;
  }
  const UserList& users(NodeId n) const { return slots_[n].users; }
  const NodeIdList& inputs(NodeId n) const { return slots_[n].inputs; }
  /// Node references in `d.args` then `d.kwargs`, in order, repeats kept (what `inputs` holds).
  static NodeIdList collect_inputs(const NodeData& d);
  const SymbolTable& symbols() const { return symbols_; }

  /// The node called `name`, or kNoNode.
  NodeId find(std::string_view name) const;
  /// A hint for appending many nodes: looking `name` up soon. Changes nothing.
  void prefetch_name(std::string_view name) const { by_name_.prefetch(name); }
  /// The output node, or kNoNode.
  NodeId output_node() const;

  NodeId first() const { return head_; }
  NodeId last() const { return tail_; }
  NodeId next(NodeId n) const { return slots_[n].next; }
  NodeId prev(NodeId n) const { return slots_[n].prev; }

  /// Iterates live nodes in graph order. Do not erase the node the iterator is on;
  /// collect first, or step with next() before erasing.
  class Iterator {
   public:
    Iterator(const Graph* g, NodeId n) : g_(g), n_(n) {}
    NodeId operator*() const { return n_; }
    Iterator& operator++() {
      n_ = g_->next(n_);
      return *this;
    }
    bool operator!=(const Iterator& o) const { return n_ != o.n_; }
    bool operator==(const Iterator& o) const { return n_ == o.n_; }

   private:
    const Graph* g_;
    NodeId n_;
  };
  struct Range {
    const Graph* g;
    Iterator begin() const { return {g, g->head_}; }
    Iterator end() const { return {g, kNoNode}; }
  };
  Range nodes() const { return {this}; }
  /// Live nodes in graph order, as a vector (safe to iterate while editing).
  std::vector<NodeId> node_list() const;

  /// Position of every live node in graph order, indexed by NodeId (kNoNode for dead slots).
  /// Recomputed lazily after the order changed (under a lock: readers may share a graph).
  const std::vector<std::uint32_t>& order_index() const { return order_cache_.positions(*this); }
  /// A number that grows along graph order; not a position: gaps are left between keys, so
  /// inserting or moving a node gives it a key between its neighbours' and leaves every other
  /// key as it was (O(1); an exhausted gap renumbers the graph once). Rewrites that compare
  /// order after every edit stay linear.
  std::uint64_t order_key(NodeId n) const { return order_cache_.key(*this, n); }
  /// True if `a` comes before `b` in graph order.
  bool comes_before(NodeId a, NodeId b) const { return order_key(a) < order_key(b); }

  // --- creating ------------------------------------------------------------------------------
  /// Makes room for `nodes` more nodes without reallocating (readers know the count up front).
  void reserve(std::size_t nodes);
  /// Insertion points next to `n`. For a node that is not in the graph the point is stale from
  /// the start: creating there appends at the end, and move() refuses it.
  InsertPoint before(NodeId n) const { return point(InsertPoint::Where::Before, n); }
  InsertPoint after(NodeId n) const { return point(InsertPoint::Where::After, n); }
  void set_insert_point(InsertPoint p) { insert_ = p; }
  InsertPoint insert_point() const { return insert_; }

  /// Creates a node at the insertion point. `name` is a hint: FX's rules make it unique
  /// (`relu`, `relu_1`, ...); empty means "derive from the target". Returns kNoNode (and
  /// creates nothing) if an argument refers to a node that is not in the graph.
  NodeId create_node(OpKind op, std::string_view target, std::vector<Argument> args = {}, Kwargs kwargs = {},
                     std::string_view name = {});
  NodeId placeholder(std::string_view name) { return create_node(OpKind::Placeholder, name, {}, {}, name); }
  NodeId output(Argument value) { return create_node(OpKind::Output, "output", {std::move(value)}); }

  /// Creates a node with exactly this name; fails if the name is taken or empty.
  /// Used by readers that must keep names as they are in the file.
  Result<NodeId> create_node_named(OpKind op, std::string_view target, std::vector<Argument> args, Kwargs kwargs,
                                   std::string name);

  /// Appends a node at the end (whatever the insertion point) with exactly this name and
  /// metadata: the graph file reader's path. `target` comes from intern_target(). Fails,
  /// creating nothing, like create_node_named.
  Result<NodeId> append_node(OpKind op, Symbol target, std::vector<Argument> args, Kwargs kwargs, std::string name,
                             NodeMeta meta);
  /// This graph's symbol for a target text, added on first use.
  Symbol intern_target(std::string_view text) { return symbols_.intern(text); }

  /// A fresh name derived from `hint` by FX's rules (`add` -> `add_1` when taken). As in FX,
  /// the name of an erased node counts as taken.
  std::string unique_name(std::string_view hint);
  /// Counts `name` as taken from now on, as the name of an erased node is: a graph converted
  /// from an FX graph keeps the names FX gave to nodes erased before, and never reuses them.
  void retire_name(std::string name);

  // --- editing -------------------------------------------------------------------------------
  // Edits that take arguments refuse (changing nothing) references to nodes not in the graph.
  Status set_args(NodeId n, std::vector<Argument> args);
  Status set_kwargs(NodeId n, Kwargs kwargs);
  Status set_arg(NodeId n, std::size_t index, Argument value);
  /// Sets (or adds at the end) keyword `key`.
  Status set_kwarg(NodeId n, std::string_view key, Argument value);
  /// Fails naming the first reference in `args`/`kwargs` to a node that is not in the graph.
  Status check_refs(const std::vector<Argument>& args, const Kwargs& kwargs) const;
  void set_target(NodeId n, std::string_view target);
  void set_op(NodeId n, OpKind op) {
    changing(n);
    slots_[n].op = op;
  }
  Status rename(NodeId n, std::string name);

  /// Makes every user of `from` (that `filter` accepts, if given) use `to` instead.
  /// Returns the users that changed, in `from`'s user order (none if either is not live).
  std::vector<NodeId> replace_all_uses_with(NodeId from, NodeId to,
                                            const std::function<bool(NodeId user)>& filter = {});
  /// For every pair, makes every user of `first` use `second` instead (as replace_all_uses_with
  /// one pair after the other, users lists in the same order), rewriting each user's arguments
  /// once however many of its inputs are replaced: one call at a time costs a pass over a user's
  /// arguments per replaced input, quadratic for a concat of many replaced nodes. Fails, changing
  /// nothing, when a node is not live, is replaced twice, or is both replaced and a replacement.
  Status replace_uses(std::span<const std::pair<NodeId, NodeId>> replaced);
  /// Erases `n`; refused (and nothing changes) while `n` still has users.
  Status erase_node(NodeId n);
  /// Moves `n` to just before / after `anchor` in graph order (FX's prepend / append).
  Status move_before(NodeId n, NodeId anchor) { return move(n, before(anchor)); }
  Status move_after(NodeId n, NodeId anchor) { return move(n, after(anchor)); }
  Status move(NodeId n, InsertPoint where);

  /// Puts the live nodes in the order `order` (a permutation of node_list()). Dependencies are
  /// not checked here: stable_topological_sort (graft/passes) computes a valid order; lint
  /// checks one.
  void reorder(const std::vector<NodeId>& order);

  // --- transactions (src/ir/transaction.cpp) --------------------------------------------------
  // While a transaction is open, every edit first saves the slots it is about to change (once
  // per slot), so rollback puts the graph back exactly, and both cost O(nodes touched) rather
  // than a copy of the whole graph. A copy of a Graph never carries an open transaction.
  /// Starts recording. Fails if a transaction is already open (use begin_nested_transaction).
  Status begin_transaction();
  /// Starts recording inside whatever transaction is open (or as the first one): commit and
  /// rollback then end this inner one only, and the outer one still covers its edits. A
  /// rewrite inside a pass uses it, so that a failed rewrite a script catches undoes itself.
  void begin_nested_transaction();
  /// Keeps every edit since the innermost begin and stops that transaction.
  void commit_transaction();
  /// Undoes every edit since the innermost begin and stops that transaction.
  void rollback_transaction();
  bool in_transaction() const { return static_cast<bool>(journal_.p); }
  /// What the open transaction changed so far (GraphDiff's definitions). O(nodes touched),
  /// except after a whole-graph reorder (stable_topological_sort), which needs O(n log n).
  GraphDiff transaction_diff() const;

  // --- listeners ------------------------------------------------------------------------------
  /// `l` hears about every edit from now on, after the graph's own journal and caches, in the
  /// order listeners were added; until remove_listener (ListenerScope does both). A copy of the
  /// graph has no listeners.
  void add_listener(GraphListener* l) { listeners_.list.push_back(l); }
  void remove_listener(GraphListener* l);

 private:
  struct Journal;
  /// Owns the journal; copying a graph copies no journal (the copy has no open transaction).
  struct JournalHandle {
    std::unique_ptr<Journal> p;
    JournalHandle();
    JournalHandle(const JournalHandle&);
    JournalHandle& operator=(const JournalHandle&);
    JournalHandle(JournalHandle&&) noexcept;
    JournalHandle& operator=(JournalHandle&&) noexcept;
    ~JournalHandle();
  };
  // The events (GraphListener's), each told to the open journal, the order cache and then the
  // listeners added, as far as each listens to it: node_changing matters to the journal only.
  void changing(NodeId n) {
    if (journal_.p) notify_journal_changing(n);
    for (GraphListener* l : listeners_.list) l->node_changing(*this, n);
  }
  void notify_journal_changing(NodeId n);
  void inserted(NodeId n);
  void erasing(NodeId n);
  void moved(NodeId n);
  void reordered();
  friend class UniqueIdScope;
  friend class FreshSlotReuse;
  /// The slot a new node may take from fresh_free_, or kNoNode.
  NodeId reusable_fresh_slot() const;

  InsertPoint point(InsertPoint::Where where, NodeId n) const {
    if (!is_alive(n)) return {where, kNoNode, 0};
    return {where, n, slots_[n].generation};
  }
  NodeId allocate_slot();
  /// create_node_named and append_node: at the insertion point, or at the end.
  Result<NodeId> add_node(OpKind op, Symbol target, std::vector<Argument> args, Kwargs kwargs, std::string name,
                          NodeMeta meta, bool at_end);
  void link(NodeId n);
  void unlink(NodeId n);
  void attach_inputs(NodeId n);
  void detach_inputs(NodeId n);
  detail::NameIndex::NameOf name_of() const {
    return [this](NodeId id) { return std::string_view(slots_[id].name); };
  }
  bool name_taken(std::string_view name) const { return find(name) != kNoNode; }

  std::vector<NodeData> slots_;
  std::vector<NodeId> free_slots_;
  /// Slots erased while ids_unique(): reusable once nothing keeps ids unique any more.
  std::vector<NodeId> held_slots_;
  /// Slots the innermost open transaction created and erased (every one at or past its
  /// slot_count, newest last): a rollback drops them, so they need no undo record and may be
  /// reused inside it while a FreshSlotReuse is open. Older entries belong to outer transactions.
  std::vector<NodeId> fresh_free_;
  /// Open UniqueIdScopes; a copy of a graph starts with none.
  struct ScopeCount {
    std::uint32_t count = 0;
    ScopeCount() = default;
    ScopeCount(const ScopeCount&) {}
    ScopeCount& operator=(const ScopeCount&) { return *this; }
  } unique_id_scopes_;
  ScopeCount fresh_reuse_scopes_;  ///< open FreshSlotReuse scopes
  std::uint32_t last_generation_ = 0;  ///< the generation of the newest node
  NodeId head_ = kNoNode;
  NodeId tail_ = kNoNode;
  std::size_t live_count_ = 0;
  InsertPoint insert_;
  SymbolTable symbols_;
  detail::NameIndex by_name_;
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> name_counters_;
  /// Names of erased nodes: as in FX, a derived name never repeats one the graph has used.
  detail::NameLog retired_names_;
  /// Filled by the first unique_name that needs a numbered name, then kept up to date.
  detail::SuffixCeiling suffix_ceiling_;
  detail::OrderCache order_cache_;  ///< filled by const readers: threads may read one graph at once
  JournalHandle journal_;
  /// Listeners added; a copy of a graph starts with none.
  struct ListenerList {
    std::vector<GraphListener*> list;
    ListenerList() = default;
    ListenerList(const ListenerList&) {}
    ListenerList& operator=(const ListenerList&) { return *this; }
    ListenerList(ListenerList&&) noexcept {}
    ListenerList& operator=(ListenerList&&) noexcept { return *this; }
    ~ListenerList() = default;
  } listeners_;
};

/// RAII: `l` listens to `g` while the scope is open.
class ListenerScope {
 public:
  ListenerScope(Graph& g, GraphListener& l) : g_(g), l_(l) { g_.add_listener(&l_); }
  ~ListenerScope() { g_.remove_listener(&l_); }
  ListenerScope(const ListenerScope&) = delete;
  ListenerScope& operator=(const ListenerScope&) = delete;

 private:
  Graph& g_;
  GraphListener& l_;
};

/// RAII: no slot of `g` is reused while the scope is open, so a NodeId taken meanwhile names at
/// most one node until it closes (a transaction does the same). For code that keeps bare ids
/// across erases outside a transaction: a Transformer's map from old nodes to new ones.
class UniqueIdScope {
 public:
  explicit UniqueIdScope(Graph& g) : g_(g) { ++g_.unique_id_scopes_.count; }
  ~UniqueIdScope() { --g_.unique_id_scopes_.count; }
  UniqueIdScope(const UniqueIdScope&) = delete;
  UniqueIdScope& operator=(const UniqueIdScope&) = delete;

 private:
  Graph& g_;
};

/// RAII: inside an open transaction, a slot the transaction created and then erased may be
/// taken by a later node of the same transaction (unless a UniqueIdScope is open). A rollback
/// drops such slots anyway, so they need no undo record, and a long run of rewrites uses memory
/// that follows the graph instead of the number of rewrites. Only for code that keeps no bare
/// NodeId of an erased node: the fixed-point rule driver, which matches where it rewrites.
class FreshSlotReuse {
 public:
  explicit FreshSlotReuse(Graph& g) : g_(g) { ++g_.fresh_reuse_scopes_.count; }
  ~FreshSlotReuse() { --g_.fresh_reuse_scopes_.count; }
  FreshSlotReuse(const FreshSlotReuse&) = delete;
  FreshSlotReuse& operator=(const FreshSlotReuse&) = delete;

 private:
  Graph& g_;
};

/// RAII: sets a graph's insertion point for a scope and restores the old one after.
class InsertionScope {
 public:
  InsertionScope(Graph& g, InsertPoint p) : g_(g), saved_(g.insert_point()) { g.set_insert_point(p); }
  /// Shorthands: `InsertionScope s(g, Before, n)`.
  enum Side { Before, After };
  InsertionScope(Graph& g, Side side, NodeId anchor)
      : InsertionScope(g, side == Before ? g.before(anchor) : g.after(anchor)) {}
  ~InsertionScope() { g_.set_insert_point(saved_); }
  InsertionScope(const InsertionScope&) = delete;
  InsertionScope& operator=(const InsertionScope&) = delete;

 private:
  Graph& g_;
  InsertPoint saved_;
};

}  // namespace graft
