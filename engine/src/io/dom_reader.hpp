// The strict walk over a parsed graph file (simdjson's DOM) that names the JSON path of
// anything wrong. The whole-document reader and the canonical line-by-line one share it.
#pragma once

#include <simdjson.h>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "graft/ir/graph.hpp"
#include "graft/ir/graph_module.hpp"

namespace graft::detail {

/// Why a read stopped: the JSON path (`$.nodes[3].args[0]`) and what is wrong there.
struct LoadError {
  std::string path;
  std::string message;
};

/// `$.nodes[index]`, for errors found outside the walk.
std::string root_node_path(std::size_t index);

/// Where the node reader looks up the node a reference names, and where it puts each node.
class NodeScope {
 public:
  virtual ~NodeScope() = default;
  virtual NodeId find(std::string_view name) = 0;
  /// Adds the node; returns false (adding nothing) if its name is taken.
  virtual bool add(OpKind op, std::string_view target, std::vector<Argument> args, Kwargs kwargs, std::string_view name,
                   NodeMeta meta) = 0;
};

/// Nodes go straight into a graph.
class GraphScope final : public NodeScope {
 public:
  explicit GraphScope(Graph& g) : g_(g) {}
  NodeId find(std::string_view name) override { return g_.find(name); }
  bool add(OpKind op, std::string_view target, std::vector<Argument> args, Kwargs kwargs, std::string_view name,
           NodeMeta meta) override {
    // References come from find(), so a taken name is the only way to fail.
    return static_cast<bool>(g_.append_node(op, g_.intern_target(target), std::move(args), std::move(kwargs),
                                            std::string(name), std::move(meta)));
  }

 private:
  Graph& g_;
};

class DomWalk;

/// Reads a whole document, or one root node or module at a time; throws LoadError. Keeps a
/// small cache between calls, so reuse one per thread.
class DomReader {
 public:
  DomReader();
  ~DomReader();
  DomReader(const DomReader&) = delete;
  DomReader& operator=(const DomReader&) = delete;

  GraphModule read(simdjson::dom::element root);
  /// Node `index` of the root graph, read on its own.
  void root_node(simdjson::dom::element e, std::size_t index, NodeScope& scope);
  /// Module `index` of the table, read on its own.
  void root_module(simdjson::dom::element e, std::size_t index, ModuleTable& modules);

 private:
  std::unique_ptr<DomWalk> walk_;
};

}  // namespace graft::detail
