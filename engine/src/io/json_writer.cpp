// Graph file writer: the canonical form of docs/FORMAT.md §5.
#include <cmath>

#include "graft/io/atomic_file.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/io/json_text.hpp"

namespace graft {

namespace {

using detail::append_int;
using detail::append_json_string;
using detail::append_python_float;

// A graph the reader would refuse: a reference to an erased node, or to a later node.
struct WriteError {
  std::string node;
  std::string message;
};

class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}

  void argument(const Graph& g, const Argument& a) {
    switch (a.kind()) {
      case ArgKind::None: out_ += "null"; return;
      case ArgKind::Bool: out_ += a.get<bool>() ? "true" : "false"; return;
      case ArgKind::Int: append_int(out_, a.get<std::int64_t>()); return;
      case ArgKind::Float: {
        double v = a.get<double>();
        if (std::isfinite(v)) append_python_float(out_, v);
        else out_ += std::isnan(v) ? R"({"float":"nan"})" : v > 0 ? R"({"float":"inf"})" : R"({"float":"-inf"})";
        return;
      }
      case ArgKind::String: append_json_string(out_, a.get<std::string>()); return;
      case ArgKind::Node:
        if (!g.is_alive(a.node_id())) throw WriteError{{}, "refers to a node that was erased"};
        out_ += R"({"node":)";
        append_json_string(out_, g.name(a.node_id()));
        out_ += '}';
        return;
      case ArgKind::DType: tagged("dtype", a.get<DType>().name); return;
      case ArgKind::Device: tagged("device", a.get<Device>().name); return;
      case ArgKind::Layout: tagged("layout", a.get<Layout>().name); return;
      case ArgKind::MemoryFormat: tagged("memory_format", a.get<MemoryFormat>().name); return;
      case ArgKind::List: array(g, a.get<List>().items); return;
      case ArgKind::Tuple:
        out_ += R"({"tuple":)";
        array(g, a.get<Tuple>().items);
        out_ += '}';
        return;
      case ArgKind::Slice:
        out_ += R"({"slice":)";
        array(g, a.get<Slice>().parts);
        out_ += '}';
        return;
      case ArgKind::Ellipsis: out_ += R"({"ellipsis":null})"; return;
      case ArgKind::Dict: {
        const Dict& d = a.get<Dict>();
        out_ += R"({"dict":[)";
        for (std::size_t i = 0; i < d.size(); ++i) {
          if (i) out_ += ',';
          out_ += '[';
          argument(g, d.key(i));
          out_ += ',';
          argument(g, d.value(i));
          out_ += ']';
        }
        out_ += "]}";
        return;
      }
    }
  }

  void node(const Graph& g, NodeId n) {
    const NodeData& d = g.node(n);
    out_ += R"({"name":)";
    append_json_string(out_, d.name);
    out_ += R"(,"op":")";
    out_ += op_kind_name(d.op);
    out_ += R"(","target":)";
    append_json_string(out_, g.target(n));
    for (NodeId input : d.inputs)
      if (g.is_alive(input) && !written_[input])
        throw WriteError{
            d.name, "uses '" + g.name(input) + "' before it is defined (stable_topological_sort() orders the graph)"};
    out_ += R"(,"args":)";
    try {
      array(g, d.args);
      out_ += R"(,"kwargs":{)";
      bool first = true;
      for (const auto& [key, value] : d.kwargs) {
        if (!first) out_ += ',';
        first = false;
        append_json_string(out_, key);
        out_ += ':';
        argument(g, value);
      }
    } catch (WriteError& e) {
      e.node = d.name;
      throw;
    }
    out_ += R"(},"meta":{)";
    bool first = true;
    const NodeMeta& meta = d.meta.get();
    if (meta.tensor_meta.kind != ValueMeta::Kind::None) {
      out_ += R"("tensor_meta":)";
      value_meta(meta.tensor_meta);
      first = false;
    }
    for (const auto& [key, json] : meta.extra) {
      if (!first) out_ += ',';
      first = false;
      append_json_string(out_, key);
      out_ += ':';
      out_ += json;
    }
    out_ += "}}";
    written_[n] = true;
  }

  void nodes_block(const Graph& g) {
    // Which nodes are already written: a node may only use those (the reader's rule). Kept
    // here rather than in the graph's order cache, so saving a const graph writes nothing to it.
    written_.assign(g.num_slots(), false);
    if (g.size() == 0) {
      out_ += "[]";
      return;
    }
    out_ += "[\n";
    bool first = true;
    for (NodeId n : g.nodes()) {
      if (!first) out_ += ",\n";
      first = false;
      node(g, n);
    }
    out_ += "\n]";
  }

  void module(const ModuleInfo& m) {
    out_ += R"({"path":)";
    append_json_string(out_, m.path);
    out_ += R"(,"class":)";
    append_json_string(out_, m.class_name);
    out_ += R"(,"parameters":)";
    tensor_specs(m.parameters);
    out_ += R"(,"buffers":)";
    tensor_specs(m.buffers);
    if (!m.attributes_json.empty()) {
      out_ += R"(,"attributes":)";
      out_ += m.attributes_json;
    }
    if (!m.origin.empty()) {
      out_ += R"(,"origin":)";
      append_json_string(out_, m.origin);
    }
    if (!m.opaque.empty()) {
      out_ += R"(,"opaque":)";
      append_json_string(out_, m.opaque);
    }
    if (m.graph) {
      out_ += R"(,"graph":{"nodes":)";
      nodes_block(*m.graph);
      out_ += '}';
    }
    out_ += '}';
  }

 private:
  void tagged(const char* tag, const std::string& name) {
    out_ += "{\"";
    out_ += tag;
    out_ += "\":";
    append_json_string(out_, name);
    out_ += '}';
  }

  void array(const Graph& g, const std::vector<Argument>& items) {
    out_ += '[';
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i) out_ += ',';
      argument(g, items[i]);
    }
    out_ += ']';
  }

  void dims(const Dims& ds) {
    out_ += '[';
    for (std::size_t i = 0; i < ds.size(); ++i) {
      if (i) out_ += ',';
      if (ds[i].is_symbolic()) append_json_string(out_, ds[i].symbol_name());
      else append_int(out_, ds[i].value());
    }
    out_ += ']';
  }

  void value_meta(const ValueMeta& v) {
    switch (v.kind) {
      case ValueMeta::Kind::None: out_ += "null"; return;
      case ValueMeta::Kind::Tensor:
        out_ += R"({"shape":)";
        dims(v.tensor.shape);
        out_ += R"(,"dtype":)";
        append_json_string(out_, v.tensor.dtype.str());
        out_ += R"(,"stride":)";
        dims(v.tensor.stride);
        out_ += R"(,"device":)";
        append_json_string(out_, v.tensor.device.str());
        out_ += '}';
        return;
      case ValueMeta::Kind::Tuple:
        out_ += '[';
        for (std::size_t i = 0; i < v.elements.size(); ++i) {
          if (i) out_ += ',';
          value_meta(v.elements[i]);
        }
        out_ += ']';
        return;
    }
  }

  void tensor_specs(const std::vector<TensorSpec>& specs) {
    out_ += '[';
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (i) out_ += ',';
      out_ += R"({"name":)";
      append_json_string(out_, specs[i].name);
      out_ += R"(,"shape":)";
      dims(specs[i].shape);
      out_ += R"(,"dtype":)";
      append_json_string(out_, specs[i].dtype.str());
      if (specs[i].data) {
        out_ += R"(,"data":)";
        append_json_string(out_, *specs[i].data);
      }
      out_ += '}';
    }
    out_ += ']';
  }

  std::string& out_;
  std::vector<bool> written_;
};

}  // namespace

Result<std::string> to_graph_json(const GraphModule& gm) {
  std::string out;
  out.reserve(256 + gm.graph.size() * 160);
  Writer w(out);
  out += "{\n\"format\": \"graft-graph\",\n\"version\": ";
  append_int(out, kGraphFormatVersion);
  out += ",\n\"meta\": ";
  out += gm.meta_json.empty() ? "{}" : gm.meta_json;
  out += ",\n\"modules\": ";
  try {
    if (gm.modules.empty()) {
      out += "[]";
    } else {
      out += "[\n";
      bool first = true;
      for (const ModuleInfo& m : gm.modules.entries()) {
        if (!first) out += ",\n";
        first = false;
        w.module(m);
      }
      out += "\n]";
    }
    out += ",\n\"nodes\": ";
    w.nodes_block(gm.graph);
  } catch (const WriteError& e) { return Status::node_error(e.node, e.message); }
  out += "\n}\n";
  return out;
}

Status save_graph_file(const GraphModule& gm, const std::string& path) {
  Result<std::string> text = to_graph_json(gm);
  if (!text) return text.status();
  return write_output_file(path, text.value());
}

}  // namespace graft
