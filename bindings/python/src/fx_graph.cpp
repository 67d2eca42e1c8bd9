#include "fx_graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "graft/io/graph_json.hpp"
#include "graft/ir/graph_diff.hpp"
#include "module_table_values.hpp"

namespace graft::python {

void ChangeLog::node_changing(const Graph&, NodeId n) { touched.push_back(n); }
void ChangeLog::node_inserted(const Graph&, NodeId n) { touched.push_back(n); }
void ChangeLog::node_erasing(const Graph&, NodeId n) { touched.push_back(n); }
void ChangeLog::node_moved(const Graph&, NodeId n) {
  touched.push_back(n);
  moved = true;
}
void ChangeLog::graph_reordered(const Graph&) { moved = true; }

namespace {

// Attribute names, made once: a conversion reads a few per node.
struct Names {
  py::str name{"name"}, op{"op"}, target{"target"}, args{"_args"}, kwargs{"_kwargs"}, meta{"meta"}, nodes{"nodes"};
  py::str next{"_next"}, root{"_root"}, append{"append"}, users{"users"};
};
const Names& names() {
  static const Names* n = new Names();  // never destroyed: Python may be gone at exit
  return *n;
}

/// Whether torch.fx can write `key` as a keyword of a call: an identifier, not a Python keyword
/// (`f(x, class = 1)` and a name with a newline make code that does not compile).
bool writable_keyword(const py::str& key) {
  static const py::object* iskeyword = new py::object(py::module_::import("keyword").attr("iskeyword"));
  return PyUnicode_IsIdentifier(key.ptr()) == 1 && !(*iskeyword)(key).cast<bool>();
}

void check_keyword(const std::string& where, const py::str& key) {
  if (!writable_keyword(key))
    throw py::value_error(fmt::format("{}: keyword {} is not a Python identifier, so torch.fx cannot write the call",
                                      where, py::repr(key).cast<std::string>()));
}

py::object get(PyObject* o, const py::str& name) {
  PyObject* r = PyObject_GetAttr(o, name.ptr());
  if (r == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(r);
}

}  // namespace

namespace {

/// Thrown by a conversion that meets a node of the same graph not converted yet (FX lets a node
/// use one that comes later: torch's own sorts repair such graphs, and so does graft's).
struct LaterNode {};

}  // namespace

void FxGraph::convert_nodes(py::handle fx_graph, Graph& g, std::unordered_map<PyObject*, NodeId>& ids,
                            std::vector<py::object>* fx_nodes) {
  const Names& k = names();
  // A list first: torch 2.x's C node iterator, walked by pybind11's iterator, gives every node twice.
  py::list nodes(get(fx_graph.ptr(), k.nodes));
  g.reserve(py::len(nodes));
  std::unordered_set<PyObject*> members;  // filled on the first miss only
  auto id_of = [&](PyObject* node) {
    auto found = ids.find(node);
    if (found != ids.end()) return found->second;
    if (members.empty())
      for (py::handle m : nodes) members.insert(m.ptr());
    if (members.contains(node)) throw LaterNode{};
    throw py::value_error(
        fmt::format("an argument refers to node {}, which is not in this graph (another graph's, or erased)",
                    py::str(get(node, names().name)).cast<std::string>()));
  };
  auto convert_args = [&](PyObject* n, const std::string& where, std::vector<Argument>& args, Kwargs& kwargs) {
    py::object fx_args = get(n, k.args);
    args.reserve(py::len(fx_args));
    std::size_t i = 0;
    for (py::handle a : fx_args)
      args.push_back(codec_->to_argument(a.ptr(), id_of, fmt::format("{}.args[{}]", where, i++)));
    py::object fx_kwargs = get(n, k.kwargs);
    PyObject *key = nullptr, *value = nullptr;
    Py_ssize_t pos = 0;
    while (PyDict_Next(fx_kwargs.ptr(), &pos, &key, &value)) {
      if (!PyUnicode_Check(key)) throw py::value_error(fmt::format("{}: a keyword that is not a string", where));
      check_keyword(where, py::reinterpret_borrow<py::str>(key));
      std::string key_text = py::reinterpret_borrow<py::str>(key).cast<std::string>();
      kwargs.emplace_back(key_text, codec_->to_argument(value, id_of, fmt::format("{}.kwargs['{}']", where, key_text)));
    }
  };
  std::vector<std::pair<PyObject*, NodeId>> later;  // nodes using a later node: their arguments come last
  for (py::handle node : nodes) {
    PyObject* n = node.ptr();
    std::string name = get(n, k.name).cast<std::string>();
    const std::string op_text = get(n, k.op).cast<std::string>();
    OpKind op{};
    if (!parse_op_kind(op_text, op)) throw py::value_error(fmt::format("node {}: unknown op {}", name, op_text));
    py::object target = get(n, k.target);
    const std::string target_text = op == OpKind::CallFunction ? codec_->function_name(target.ptr())
        : py::isinstance<py::str>(target)                      ? target.cast<std::string>()
                                                               : py::str(target).cast<std::string>();
    const std::string where = fmt::format("node '{}'", name);
    std::vector<Argument> args;
    Kwargs kwargs;
    bool uses_later = false;
    try {
      convert_args(n, where, args, kwargs);
    } catch (const LaterNode&) {
      if (!later_nodes_)
        throw py::value_error(
            fmt::format("{} uses a node that comes after it; sort the graph first "
                        "(graft.passes.stable_topological_sort)",
                        where));
      args.clear();
      kwargs.clear();
      uses_later = true;
    }
    py::object meta = get(n, k.meta);
    NodeMeta node_meta = !with_meta_ || PyDict_Size(meta.ptr()) == 0 ? NodeMeta{} : codec_->node_meta(n);
    Result<NodeId> id =
        g.append_node(op, g.intern_target(target_text), std::move(args), std::move(kwargs), name, std::move(node_meta));
    if (!id) throw py::value_error(fmt::format("{}: {}", where, id.status().message()));
    ids.emplace(n, id.value());
    if (uses_later) later.emplace_back(n, id.value());
    if (fx_nodes == nullptr) continue;
    if (fx_nodes->size() <= id.value()) fx_nodes->resize(id.value() + 1);
    (*fx_nodes)[id.value()] = py::reinterpret_borrow<py::object>(node);
  }
  for (auto [n, id] : later) {
    const std::string where = fmt::format("node '{}'", g.name(id));
    std::vector<Argument> args;
    Kwargs kwargs;
    convert_args(n, where, args, kwargs);  // every node has an id now
    if (Status st = g.set_args(id, std::move(args)); !st)
      throw py::value_error(fmt::format("{}: {}", where, st.message()));
    if (Status st = g.set_kwargs(id, std::move(kwargs)); !st)
      throw py::value_error(fmt::format("{}: {}", where, st.message()));
  }
}

FxGraph::FxGraph(std::shared_ptr<Codec> codec, py::object graph, py::handle modules, py::handle module_graphs,
                 bool with_meta, bool later_nodes)
    : codec_(std::move(codec)), graph_(std::move(graph)), with_meta_(with_meta), later_nodes_(later_nodes) {
  if (!modules.is_none())
    ir_.modules = module_table_from_python(*codec_, modules, module_graphs, [this](py::handle fx, Graph& into) {
      std::unordered_map<PyObject*, NodeId> ids;
      convert_nodes(fx, into, ids, nullptr);
    });
  convert_nodes(graph_, ir_.graph, ids_, &fx_nodes_);
  mark_module_graphs();
  // Names FX gave out before (to nodes erased since) stay taken, so graft names new nodes as FX would.
  py::object used = graph_.attr("_graph_namespace").attr("_used_names");
  for (py::handle name : used) ir_.graph.retire_name(name.cast<std::string>());
  unique_ids_ = std::make_unique<UniqueIdScope>(ir_.graph);
  ir_.graph.add_listener(&log_);
}

FxGraph::~FxGraph() { ir_.graph.remove_listener(&log_); }

py::object FxGraph::fx_node(NodeId n) const {
  if (n < fx_nodes_.size() && fx_nodes_[n]) return fx_nodes_[n];
  return py::none();
}

NodeId FxGraph::node_id(PyObject* fx_node) const {
  auto found = ids_.find(fx_node);
  if (found == ids_.end()) {
    PyObject* name = PyObject_GetAttrString(fx_node, "name");
    std::string text = name != nullptr && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : "?";
    Py_XDECREF(name);
    PyErr_Clear();
    throw py::key_error(fmt::format("node '{}' is not in this graph (it is another graph's, or erased)", text));
  }
  return found->second;
}

py::object FxGraph::fx_target(NodeId n) {
  const Graph& g = ir_.graph;
  return g.op(n) == OpKind::CallFunction ? codec_->function(g.target(n)) : py::object(py::str(g.target(n)));
}

py::tuple FxGraph::fx_args(NodeId n, const FxOf& fx_of) {
  const std::vector<Argument>& args = ir_.graph.args(n);
  py::tuple out(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) out[i] = codec_->from_argument(args[i], fx_of);
  return out;
}

py::dict FxGraph::fx_kwargs(NodeId n, const FxOf& fx_of) {
  py::dict out;
  for (const auto& [key, value] : ir_.graph.kwargs(n)) out[py::str(key)] = codec_->from_argument(value, fx_of);
  return out;
}

py::object FxGraph::make_fx_node(NodeId n, const FxOf& fx_of) {
  const Graph& g = ir_.graph;
  py::object node = graph_.attr("create_node")(std::string(op_kind_name(g.op(n))), fx_target(n), fx_args(n, fx_of),
                                               fx_kwargs(n, fx_of), g.name(n));
  set_fx_meta(node, n);
  return node;
}

void FxGraph::place(const py::object& node, NodeId n, const FxOf& fx_of) {
  // Right after the FX node of its IR predecessor (made already: nodes are made in order).
  const NodeId prev = ir_.graph.prev(n);
  py::object anchor = prev == kNoNode ? get(graph_.ptr(), names().root) : fx_of(prev);
  anchor.attr("append")(node);
}

void FxGraph::set_fx_args(const py::object& node, NodeId n, const FxOf& fx_of,
                          const std::function<NodeId(PyObject*)>& id_of) {
  // Compared as graft compares arguments (2 is not 2.0, nor True), not with Python's ==; and
  // only what changed is set, since each setter re-walks both args and kwargs in Python (most
  // nodes an edit touches only gained or lost a user).
  const Graph& g = ir_.graph;
  auto current_args = [&]() -> std::optional<std::vector<Argument>> {
    std::vector<Argument> out;
    std::size_t i = 0;
    for (py::handle a : node.attr("args")) {
      out.push_back(codec_->to_argument(a.ptr(), id_of, std::to_string(i++)));
      if (out.size() > g.args(n).size()) return std::nullopt;
    }
    return out;
  };
  auto current_kwargs = [&]() {
    Kwargs out;
    py::dict kwargs = node.attr("kwargs");
    for (auto [k, v] : kwargs) out.emplace_back(k.cast<std::string>(), codec_->to_argument(v.ptr(), id_of, "kwarg"));
    return out;
  };
  const auto args_now = current_args();
  if (!args_now || *args_now != g.args(n)) { node.attr("args") = fx_args(n, fx_of); }
  if (current_kwargs() != g.kwargs(n)) node.attr("kwargs") = fx_kwargs(n, fx_of);
}

void FxGraph::set_fx_meta(const py::object& node, NodeId n) {
  if (!with_meta_) return;  // the IR never saw the meta: the FX node's stays as it is
  const NodeMeta& want = ir_.graph.meta(n);
  py::dict meta = node.attr("meta");
  const NodeMeta have = PyDict_Size(meta.ptr()) == 0 ? NodeMeta{} : codec_->node_meta(node.ptr());
  if (have == want) return;
  if (!(have.tensor_meta == want.tensor_meta)) {
    // FX's own descriptions (ShapeProp's tensor_meta, fake tensors) describe the old value.
    for (const char* stale : {"tensor_meta", "val"})
      if (meta.contains(stale)) PyDict_DelItemString(meta.ptr(), stale);
    if (want.tensor_meta.kind == ValueMeta::Kind::None) {
      if (meta.contains(codec_->tensor_meta_key())) PyDict_DelItem(meta.ptr(), codec_->tensor_meta_key().ptr());
    } else {
      meta[codec_->tensor_meta_key()] = codec_->describe(want.tensor_meta);
    }
  }
  for (const auto& [key, text] : have.extra)
    if (want.find_extra(key) == nullptr) PyDict_DelItemString(meta.ptr(), key.c_str());
  for (const auto& [key, text] : want.extra) {
    const std::string* old = have.find_extra(key);
    if (old == nullptr || *old != text) meta[py::str(key)] = codec_->meta_value(key, text);
  }
}

void FxGraph::check_convertible(NodeId n) {
  const FxOf nothing = [](NodeId) { return py::object(py::none()); };
  for (const auto& [key, value] : ir_.graph.kwargs(n))
    check_keyword(fmt::format("node '{}'", ir_.graph.name(n)), py::str(key));
  fx_target(n);
  fx_args(n, nothing);
  fx_kwargs(n, nothing);
}

bool FxGraph::same_kind(const py::object& node, NodeId n) {
  const Graph& g = ir_.graph;
  if (node.attr("op").cast<std::string>() != op_kind_name(g.op(n))) return false;
  py::object target = node.attr("target");
  if (g.op(n) == OpKind::CallFunction) return codec_->function_name(target.ptr()) == g.target(n);
  return py::str(target).cast<std::string>() == g.target(n);
}

void FxGraph::update_fx_node(NodeId n) {
  const Graph& g = ir_.graph;
  py::object node = fx_nodes_[n];
  set_fx_args(
      node, n, [this](NodeId id) { return fx_node(id); },
      [this](PyObject* o) {
        auto found = ids_.find(o);
        return found == ids_.end() ? kNoNode : found->second;
      });
  set_fx_meta(node, n);
  if (!same_kind(node, n)) {
    node.attr("op") = py::str(std::string(op_kind_name(g.op(n))));
    node.attr("target") = fx_target(n);
  }
  if (node.attr("name").cast<std::string>() != g.name(n)) node.attr("name") = py::str(g.name(n));
}

void FxGraph::fix_order(const FxOf& fx_of) {
  const Names& k = names();
  py::object cursor = get(graph_.ptr(), k.root);
  for (NodeId n : ir_.graph.nodes()) {
    py::object fx = fx_of(n);
    if (get(cursor.ptr(), k.next).ptr() != fx.ptr()) cursor.attr("append")(fx);
    cursor = fx;
  }
}

void FxGraph::erase_fx_nodes(std::vector<py::object> pending) {
  // Users before what they use: start from the nodes nobody uses; erasing one may free its inputs.
  std::unordered_set<PyObject*> waiting;
  for (const py::object& node : pending) waiting.insert(node.ptr());
  std::vector<py::object> ready;
  for (const py::object& node : pending)
    if (py::len(node.attr("users")) == 0) ready.push_back(node);
  while (!ready.empty()) {
    py::object node = std::move(ready.back());
    ready.pop_back();
    if (waiting.erase(node.ptr()) == 0) continue;  // erased already
    py::list inputs = node.attr("all_input_nodes");
    graph_.attr("erase_node")(node);
    for (py::handle input : inputs)
      if (waiting.count(input.ptr()) && py::len(input.attr("users")) == 0)
        ready.push_back(py::reinterpret_borrow<py::object>(input));
  }
  if (!waiting.empty()) {
    for (const py::object& node : pending)
      if (waiting.count(node.ptr()))
        throw std::logic_error(
            fmt::format("sync: node {} still has users", py::str(node.attr("name")).cast<std::string>()));
  }
}

bool FxGraph::sync() {
  if (log_.touched.empty() && !log_.moved) return false;
  const Graph& g = ir_.graph;
  std::vector<NodeId> touched = log_.touched;
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  std::vector<NodeId> fresh, changed;
  std::vector<py::object> erased;
  for (NodeId n : touched) {
    const bool known = n < fx_nodes_.size() && fx_nodes_[n];
    if (g.is_alive(n)) (known ? changed : fresh).push_back(n);
    else if (known && !fx_nodes_[n].attr("_erased").cast<bool>()) erased.push_back(fx_nodes_[n]);
  }
  std::sort(fresh.begin(), fresh.end(), [&](NodeId a, NodeId b) { return g.comes_before(a, b); });
  for (NodeId n : fresh) check_convertible(n);
  for (NodeId n : changed) check_convertible(n);
  const FxOf fx_of = [this](NodeId id) { return fx_node(id); };
  std::unordered_set<std::string> freed;  // names of the FX nodes this sync erases
  for (const py::object& node : erased) freed.insert(node.attr("name").cast<std::string>());
  std::vector<std::pair<py::object, std::string>> reclaim;
  bool placed = true;
  for (NodeId n : fresh) {
    py::object node = make_fx_node(n, fx_of);
    const std::string fx_name = node.attr("name").cast<std::string>();
    if (fx_name != g.name(n)) {
      if (freed.contains(g.name(n))) {
        reclaim.emplace_back(node, g.name(n));  // a replaced node's name (keep_names): once it is erased
      } else if (Status s = ir_.graph.rename(n, fx_name); !s) {
        // The FX graph's names include ones graft never saw (nodes erased before the conversion).
        throw py::value_error(s.message());
      }
    }
    placed = placed && (g.prev(n) == kNoNode || fx_node(g.prev(n)));
    if (g.prev(n) == kNoNode || fx_node(g.prev(n))) place(node, n, fx_of);
    ids_.emplace(node.ptr(), n);
    if (fx_nodes_.size() <= n) fx_nodes_.resize(n + 1);
    fx_nodes_[n] = std::move(node);
  }
  for (NodeId n : changed) update_fx_node(n);
  erase_fx_nodes(std::move(erased));
  take_freed_names(reclaim);
  if (log_.moved || !placed) fix_order(fx_of);
  log_.clear();
  return true;
}

void FxGraph::take_freed_names(const std::vector<std::pair<py::object, std::string>>& reclaim) {
  // torch.fx never frees a name: an erased node's stays in the namespace's used set. Where graft
  // gave a new node the name of one this sync erased, the name is taken back from that set.
  if (reclaim.empty()) return;
  py::object used = graph_.attr("_graph_namespace").attr("_used_names");
  for (const auto& [node, name] : reclaim) {
    used.attr("discard")(name);
    node.attr("_rename")(name);
    const std::string given = node.attr("name").cast<std::string>();
    NodeId n = node_id(node.ptr());
    if (given != ir_.graph.name(n))
      if (Status s = ir_.graph.rename(n, given); !s) throw py::value_error(s.message());
  }
}

void FxGraph::check() {
  for (NodeId n : ir_.graph.nodes()) check_convertible(n);
}

void FxGraph::take_module_graph(const FxGraph& other, const std::string& path) {
  const ModuleInfo* module = other.ir().modules.find(path);
  if (module == nullptr || !module->graph) throw py::key_error(fmt::format("module '{}' has no graph", path));
  ir_.graph = *module->graph;
}

py::list FxGraph::module_entries() const {
  return module_table_to_python(ir_.modules, [this](const Graph& g) {
    py::object fx = py::module_::import("torch.fx").attr("Graph")();
    FxGraph made(codec_, fx, py::none(), py::none(), with_meta_);
    made.ir_.graph = g;
    made.sync_by_name();
    return fx;
  });
}

namespace {

/// The same node names in the same order: diff_by_name compares what nodes hold, not where
/// they stand, and a reorder (a sort, a move) is an edit FX must see too.
bool same_order(const Graph& a, const Graph& b) {
  if (a.size() != b.size()) return false;
  auto x = a.nodes().begin();
  for (NodeId n : b.nodes()) {
    if (a.name(*x) != b.name(n)) return false;
    ++x;
  }
  return true;
}

}  // namespace

std::vector<std::string> FxGraph::edited_module_graphs() const {
  std::vector<std::string> out;
  for (const auto& [path, before] : module_graphs_seen_) {
    const ModuleInfo* m = ir_.modules.find(path);
    if (m != nullptr && m->graph && (!diff_by_name(before, *m->graph).empty() || !same_order(before, *m->graph)))
      out.push_back(path);
  }
  return out;
}

void FxGraph::mark_module_graphs() {
  module_graphs_seen_.clear();
  for (const ModuleInfo& m : ir_.modules.entries())
    if (m.graph) module_graphs_seen_.emplace_back(m.path, *m.graph);
}

void FxGraph::sync_by_name() {
  const Graph& g = ir_.graph;
  std::unordered_map<std::string, py::object> by_name;
  for (py::handle node : py::list(get(graph_.ptr(), names().nodes)))
    by_name.emplace(node.attr("name").cast<std::string>(), py::reinterpret_borrow<py::object>(node));
  std::vector<py::object> fx(g.num_slots());
  std::unordered_set<PyObject*> kept;
  for (NodeId n : g.nodes()) {
    auto found = by_name.find(g.name(n));
    if (found != by_name.end() && same_kind(found->second, n)) {
      fx[n] = found->second;
      kept.insert(found->second.ptr());
    }
  }
  check();  // before the FX graph changes at all
  const FxOf fx_of = [&fx](NodeId id) { return fx[id]; };
  std::unordered_map<PyObject*, NodeId> id_of_kept;
  for (NodeId n : g.nodes())
    if (fx[n]) id_of_kept.emplace(fx[n].ptr(), n);
  const auto id_of = [&id_of_kept](PyObject* o) {
    auto found = id_of_kept.find(o);
    return found == id_of_kept.end() ? kNoNode : found->second;
  };
  std::vector<std::pair<py::object, std::string>> misnamed;
  for (NodeId n : g.nodes()) {
    if (fx[n]) {
      set_fx_args(fx[n], n, fx_of, id_of);
      set_fx_meta(fx[n], n);
      continue;
    }
    fx[n] = make_fx_node(n, fx_of);
    place(fx[n], n, fx_of);
    // An FX node this one replaces may still hold the name: it is taken over once that is erased.
    if (fx[n].attr("name").cast<std::string>() != g.name(n)) misnamed.emplace_back(fx[n], g.name(n));
  }
  std::vector<py::object> gone;
  for (auto& [name, node] : by_name)
    if (!kept.count(node.ptr())) gone.push_back(node);
  std::sort(gone.begin(), gone.end(), [](const py::object& a, const py::object& b) {
    return a.attr("name").cast<std::string>() < b.attr("name").cast<std::string>();
  });
  erase_fx_nodes(std::move(gone));
  for (auto& [node, name] : misnamed) node.attr("name") = py::str(name);
  fix_order(fx_of);
  fx_nodes_ = std::move(fx);
  ids_.clear();
  for (NodeId n : g.nodes()) ids_.emplace(fx_nodes_[n].ptr(), n);
  log_.clear();
}

}  // namespace graft::python
