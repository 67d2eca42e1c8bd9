// FxGraph: a torch.fx.Graph converted to graft's IR in memory, tied to the FX graph it came
// from, so that edits made on the IR can be applied back to the same FX graph: nodes the IR
// kept stay the user's Node objects (with their meta), new ones are created, erased ones erased.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "graft/ir/graph_module.hpp"
#include "python_values.hpp"

namespace graft::python {

/// Which IR nodes an edit touched since the last sync (a GraphListener).
class ChangeLog : public GraphListener {
 public:
  void node_changing(const Graph& g, NodeId n) override;
  void node_inserted(const Graph& g, NodeId n) override;
  void node_erasing(const Graph& g, NodeId n) override;
  void node_moved(const Graph& g, NodeId n) override;
  void graph_reordered(const Graph& g) override;

  std::vector<NodeId> touched;  ///< changed, inserted or erased (repeats possible)
  bool moved = false;  ///< the order changed beyond new nodes' own positions
  void clear() {
    touched.clear();
    moved = false;
  }
};

class FxGraph {
 public:
  /// Converts `graph` (a torch.fx.Graph). `modules` (None: no table) is the module table of the
  /// graph's owner as graft_fx.export.module_table gives it, without graphs; `module_graphs` maps
  /// the paths of GraphModule submodules to their torch.fx.Graphs (module_table_values.hpp).
  /// Without `with_meta` the IR holds no metadata (matching by operators needs none, and
  /// converting it is most of a conversion's cost) and syncing leaves every FX node's meta as it is.
  /// With `later_nodes` a node may use one that comes after it (a graph to sort); without, such a
  /// graph is refused naming both nodes.
  FxGraph(std::shared_ptr<Codec> codec, py::object graph, py::handle modules, py::handle module_graphs,
          bool with_meta = true, bool later_nodes = false);
  ~FxGraph();
  FxGraph(const FxGraph&) = delete;
  FxGraph& operator=(const FxGraph&) = delete;

  Codec& codec() const { return *codec_; }
  const std::shared_ptr<Codec>& codec_ptr() const { return codec_; }
  GraphModule& ir() { return ir_; }
  const GraphModule& ir() const { return ir_; }
  const py::object& fx_graph() const { return graph_; }
  /// The FX node for IR node `n`: the user's, one made by sync(), or None (not synced yet).
  py::object fx_node(NodeId n) const;
  /// The IR node of an FX node of this graph (raises KeyError for another graph's node).
  NodeId node_id(PyObject* fx_node) const;

  /// Applies every IR edit since the conversion (or the last sync) to the FX graph, from what
  /// the listener recorded: cost in proportion to the edit. False if there was nothing to apply.
  bool sync();
  /// The same for edits the listener cannot follow (a Transformer pass replaces the whole
  /// graph): IR and FX nodes are paired by name (and op and target), O(graph).
  void sync_by_name();
  /// Raises (changing nothing) if some IR node cannot become an FX node.
  void check();
  /// The graph of module `path` of `other`'s module table becomes this IR's graph (a
  /// submodule's graph a script edited; sync_by_name() then applies it to this FX graph).
  void take_module_graph(const FxGraph& other, const std::string& path);
  /// The module table as the file's entries in Python data, module graphs as new torch.fx.Graphs.
  py::list module_entries() const;
  /// The paths of module graphs that differ from when they were converted or last marked (a
  /// script edited them inside g:submodule), in table order.
  std::vector<std::string> edited_module_graphs() const;
  /// The module graphs as they are now become the ones edited_module_graphs() compares with.
  void mark_module_graphs();

 private:
  using FxOf = std::function<py::object(NodeId)>;
  /// Appends `fx_graph`'s nodes to `g`; `ids` maps each FX node to its IR node, and `fx_nodes`,
  /// when given, each IR node back to its FX node.
  void convert_nodes(py::handle fx_graph, Graph& g, std::unordered_map<PyObject*, NodeId>& ids,
                     std::vector<py::object>* fx_nodes);
  /// IR node `n`'s target, args and kwargs as FX values (`fx_of`: node references).
  py::object fx_target(NodeId n);
  py::tuple fx_args(NodeId n, const FxOf& fx_of);
  py::dict fx_kwargs(NodeId n, const FxOf& fx_of);
  /// A new FX node for IR node `n`, at the end of the FX graph (the caller places it).
  py::object make_fx_node(NodeId n, const FxOf& fx_of);
  void set_fx_args(const py::object& node, NodeId n, const FxOf& fx_of, const std::function<NodeId(PyObject*)>& id_of);
  /// The FX node's meta made what the IR says, where the IR has a say (tensor_meta, JSON keys).
  void set_fx_meta(const py::object& node, NodeId n);
  void update_fx_node(NodeId n);
  bool same_kind(const py::object& node, NodeId n);
  /// Raises (changing nothing) if IR node `n` cannot become an FX node: an unknown function, a
  /// value torch cannot make. Run on every node a sync makes or changes, before it edits.
  void check_convertible(NodeId n);
  void place(const py::object& node, NodeId n, const FxOf& fx_of);
  void fix_order(const FxOf& fx_of);
  void erase_fx_nodes(std::vector<py::object> pending);
  /// Gives each FX node the name graft chose for it, freed by a node this sync erased.
  void take_freed_names(const std::vector<std::pair<py::object, std::string>>& reclaim);

  std::shared_ptr<Codec> codec_;
  GraphModule ir_;
  py::object graph_;
  bool with_meta_ = true;
  bool later_nodes_ = false;
  std::vector<py::object> fx_nodes_;  ///< by NodeId; erased nodes keep theirs (FX's reports name them)
  std::unordered_map<PyObject*, NodeId> ids_;
  ChangeLog log_;
  std::unique_ptr<UniqueIdScope> unique_ids_;  ///< fx_nodes_ is keyed by bare ids
  std::vector<std::pair<std::string, Graph>> module_graphs_seen_;  ///< for edited_module_graphs()
};

}  // namespace graft::python
