#include "fx_graph.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "graft/io/graph_json.hpp"

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

py::object get(PyObject* o, const py::str& name) {
  PyObject* r = PyObject_GetAttr(o, name.ptr());
  if (r == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(r);
}

}  // namespace

FxGraph::FxGraph(Codec& codec, py::object graph, const std::string& modules_json)
    : codec_(codec), graph_(std::move(graph)) {
  if (!modules_json.empty()) {
    Result<GraphModule> table = parse_graph_json(modules_json, "<module table>");
    if (!table) throw py::value_error(table.status().message());
    ir_.modules = std::move(table.value().modules);
  }
  const Names& k = names();
  Graph& g = ir_.graph;
  py::object nodes = get(graph_.ptr(), k.nodes);
  g.reserve(py::len(nodes));
  auto id_of = [this](PyObject* node) {
    auto found = ids_.find(node);
    if (found == ids_.end())
      throw py::value_error(fmt::format("an argument refers to node {} of another graph, or to a later node",
                                        py::str(get(node, names().name)).cast<std::string>()));
    return found->second;
  };
  for (py::handle node : nodes) {
    PyObject* n = node.ptr();
    std::string name = get(n, k.name).cast<std::string>();
    const std::string op_text = get(n, k.op).cast<std::string>();
    OpKind op{};
    if (!parse_op_kind(op_text, op)) throw py::value_error(fmt::format("node {}: unknown op {}", name, op_text));
    py::object target = get(n, k.target);
    const std::string target_text = op == OpKind::CallFunction ? codec_.function_name(target.ptr())
        : py::isinstance<py::str>(target)                      ? target.cast<std::string>()
                                                               : py::str(target).cast<std::string>();
    const std::string where = fmt::format("node '{}'", name);
    py::object fx_args = get(n, k.args);
    std::vector<Argument> args;
    args.reserve(py::len(fx_args));
    std::size_t i = 0;
    for (py::handle a : fx_args)
      args.push_back(codec_.to_argument(a.ptr(), id_of, fmt::format("{}.args[{}]", where, i++)));
    Kwargs kwargs;
    py::object fx_kwargs = get(n, k.kwargs);
    PyObject *key = nullptr, *value = nullptr;
    Py_ssize_t pos = 0;
    while (PyDict_Next(fx_kwargs.ptr(), &pos, &key, &value)) {
      std::string key_text = py::reinterpret_borrow<py::str>(key).cast<std::string>();
      kwargs.emplace_back(key_text, codec_.to_argument(value, id_of, fmt::format("{}.kwargs['{}']", where, key_text)));
    }
    py::object meta = get(n, k.meta);
    NodeMeta node_meta = PyDict_Size(meta.ptr()) == 0 ? NodeMeta{} : codec_.node_meta(n);
    Result<NodeId> id =
        g.append_node(op, g.intern_target(target_text), std::move(args), std::move(kwargs), name, std::move(node_meta));
    if (!id) throw py::value_error(fmt::format("{}: {}", where, id.status().message()));
    ids_.emplace(n, id.value());
    if (fx_nodes_.size() <= id.value()) fx_nodes_.resize(id.value() + 1);
    fx_nodes_[id.value()] = py::reinterpret_borrow<py::object>(node);
  }
  unique_ids_ = std::make_unique<UniqueIdScope>(g);
  g.add_listener(&log_);
}

FxGraph::~FxGraph() { ir_.graph.remove_listener(&log_); }

py::object FxGraph::fx_node(NodeId n) const {
  if (n < fx_nodes_.size() && fx_nodes_[n]) return fx_nodes_[n];
  return py::none();
}

NodeId FxGraph::node_id(PyObject* fx_node) const {
  auto found = ids_.find(fx_node);
  if (found == ids_.end()) throw py::key_error("the node is not in this graph");
  return found->second;
}

void FxGraph::create_fx_node(NodeId n) {
  const Graph& g = ir_.graph;
  auto fx_of = [this](NodeId id) { return fx_node(id); };
  py::tuple args(g.args(n).size());
  for (std::size_t i = 0; i < g.args(n).size(); ++i) args[i] = codec_.from_argument(g.args(n)[i], fx_of);
  py::dict kwargs;
  for (const auto& [key, value] : g.kwargs(n)) kwargs[py::str(key)] = codec_.from_argument(value, fx_of);
  const OpKind op = g.op(n);
  py::object target = op == OpKind::CallFunction ? codec_.function(g.target(n)) : py::str(g.target(n));
  py::object node = graph_.attr("create_node")(std::string(op_kind_name(op)), target, args, kwargs, g.name(n));
  const std::string fx_name = node.attr("name").cast<std::string>();
  if (fx_name != g.name(n)) {
    // The FX graph's names include ones graft never saw (nodes erased before the conversion).
    if (Status s = ir_.graph.rename(n, fx_name); !s) throw py::value_error(s.message());
  }
  const NodeMeta& meta = g.meta(n);
  if (meta.tensor_meta.kind != ValueMeta::Kind::None)
    node.attr("meta")[codec_.tensor_meta_key()] = codec_.describe(meta.tensor_meta);
  for (const auto& [key, text] : meta.extra) node.attr("meta")[py::str(key)] = codec_.json_value(text);
  // Right after the FX node of its IR predecessor (made already: new nodes are made in order).
  const NodeId prev = g.prev(n);
  py::object anchor = prev == kNoNode ? get(graph_.ptr(), names().root) : fx_node(prev);
  anchor.attr("append")(node);
  ids_.emplace(node.ptr(), n);
  if (fx_nodes_.size() <= n) fx_nodes_.resize(n + 1);
  fx_nodes_[n] = std::move(node);
}

void FxGraph::update_fx_node(NodeId n) {
  const Graph& g = ir_.graph;
  py::object node = fx_nodes_[n];
  auto fx_of = [this](NodeId id) { return fx_node(id); };
  py::tuple args(g.args(n).size());
  for (std::size_t i = 0; i < g.args(n).size(); ++i) args[i] = codec_.from_argument(g.args(n)[i], fx_of);
  py::dict kwargs;
  for (const auto& [key, value] : g.kwargs(n)) kwargs[py::str(key)] = codec_.from_argument(value, fx_of);
  node.attr("args") = args;
  node.attr("kwargs") = kwargs;
  if (g.op(n) != OpKind::CallFunction && node.attr("target").cast<py::object>().not_equal(py::str(g.target(n))))
    node.attr("target") = py::str(g.target(n));
  else if (g.op(n) == OpKind::CallFunction && codec_.function_name(node.attr("target").ptr()) != g.target(n))
    node.attr("target") = codec_.function(g.target(n));
  node.attr("op") = py::str(std::string(op_kind_name(g.op(n))));
  if (node.attr("name").cast<std::string>() != g.name(n)) node.attr("name") = py::str(g.name(n));
}

void FxGraph::fix_order() {
  const Names& k = names();
  py::object cursor = get(graph_.ptr(), k.root);
  for (NodeId n : ir_.graph.nodes()) {
    const py::object& fx = fx_nodes_[n];
    if (get(cursor.ptr(), k.next).ptr() != fx.ptr()) cursor.attr("append")(fx);
    cursor = fx;
  }
}

void FxGraph::sync() {
  if (log_.touched.empty() && !log_.moved) return;
  const Graph& g = ir_.graph;
  std::vector<NodeId> touched = log_.touched;
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  std::vector<NodeId> fresh, changed, erased;
  for (NodeId n : touched) {
    const bool known = n < fx_nodes_.size() && fx_nodes_[n];
    if (g.is_alive(n)) (known ? changed : fresh).push_back(n);
    else if (known) erased.push_back(n);
  }
  std::sort(fresh.begin(), fresh.end(), [&](NodeId a, NodeId b) { return g.comes_before(a, b); });
  bool placed = true;
  for (NodeId n : fresh) {
    create_fx_node(n);
    placed = placed && (g.prev(n) == kNoNode || fx_nodes_[g.prev(n)]);
  }
  for (NodeId n : changed) update_fx_node(n);
  // Erase users before what they use; a node an FX graph erased already is skipped.
  std::vector<py::object> pending;
  for (NodeId n : erased)
    if (!fx_nodes_[n].attr("_erased").cast<bool>()) pending.push_back(fx_nodes_[n]);
  while (!pending.empty()) {
    std::vector<py::object> rest;
    for (py::object& node : pending) {
      if (py::len(node.attr("users")) == 0) {
        graph_.attr("erase_node")(node);
      } else {
        rest.push_back(node);
      }
    }
    if (rest.size() == pending.size())
      throw std::logic_error(
          fmt::format("sync: node {} still has users", py::str(rest[0].attr("name")).cast<std::string>()));
    pending = std::move(rest);
  }
  if (log_.moved || !placed) fix_order();
  log_.clear();
}

}  // namespace graft::python
