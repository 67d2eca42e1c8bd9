// Small graphs for tests, written as canonical JSON node lines (docs/FORMAT.md).
#pragma once

#include <doctest/doctest.h>

#include <initializer_list>
#include <string>

#include "graft/io/graph_json.hpp"
#include "graft/io/graph_text.hpp"

namespace graft::test {

/// A graph module from node lines and, optionally, module lines.
inline GraphModule module_of(const std::string& nodes, const std::string& modules = "") {
  const std::string doc = "{\n\"format\": \"graft-graph\",\n\"version\": 1,\n\"meta\": {},\n\"modules\": [" + modules +
      "],\n\"nodes\": [\n" + nodes + "\n]\n}\n";
  Result<GraphModule> r = parse_graph_json(doc, "test.json");
  REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  return std::move(r).value();
}
inline Graph graph_of(const std::string& nodes) { return std::move(module_of(nodes).graph); }

/// A graph module from the graph text notation (docs/FORMAT.md §7), with no module table.
inline GraphModule module_of_text(std::string_view text) {
  Result<Graph> g = parse_graph_text(text);
  REQUIRE_MESSAGE(g.is_ok(), g.status().message());
  GraphModule gm;
  gm.graph = std::move(g).value();
  return gm;
}

inline std::string ph(const char* name) {
  return std::string(R"({"name":")") + name + R"(","op":"placeholder","target":")" + name +
      R"(","args":[],"kwargs":{},"meta":{}})";
}
inline std::string node(const char* op, const char* name, const char* target, const std::string& args,
                        const std::string& kwargs = "{}") {
  return std::string(R"({"name":")") + name + R"(","op":")" + op + R"(","target":")" + target + R"(","args":)" + args +
      R"(,"kwargs":)" + kwargs + R"(,"meta":{}})";
}
inline std::string call(const char* name, const char* target, const std::string& args,
                        const std::string& kwargs = "{}") {
  return node("call_function", name, target, args, kwargs);
}
inline std::string out(const std::string& args) {
  return R"({"name":"output","op":"output","target":"output","args":[)" + args + R"(],"kwargs":{},"meta":{}})";
}
inline std::string lines(std::initializer_list<std::string> items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ",\n") + i;
  return s;
}

/// Gives node `name` float32 tensor meta of `shape` and `stride`.
inline void set_meta(Graph& g, std::string_view name, Dims shape, Dims stride) {
  ValueMeta& m = g.edit_meta(g.find(name)).tensor_meta;
  m.kind = ValueMeta::Kind::Tensor;
  m.tensor.dtype = "float32";
  m.tensor.device = "cpu";
  m.tensor.shape = std::move(shape);
  m.tensor.stride = std::move(stride);
}

}  // namespace graft::test
