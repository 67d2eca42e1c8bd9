// Graph file writer: the canonical form of docs/FORMAT.md §5.
#include <cmath>

#include <array>
#include <string_view>

#include "graft/io/atomic_file.hpp"
#include "graft/io/format_fields.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/io/json_text.hpp"

namespace graft {

namespace {

using detail::append_int;
using detail::append_json_string;
using detail::append_python_float;

/// `{"key":` or `,"key":`, made at compile time from the format's field table, so the writer
/// spells each key as the reader expects it.
struct KeyPrefix {
  std::array<char, 24> text{};
  std::size_t size = 0;
  constexpr std::string_view view() const { return {text.data(), size}; }
};

template <std::size_t N, class E>
constexpr KeyPrefix prefix(char open, const std::array<format::Field, N>& fields, E field) {
  KeyPrefix p;
  p.text.at(p.size++) = open;
  p.text.at(p.size++) = '"';
  for (char c : format::key(fields, field)) p.text.at(p.size++) = c;
  p.text.at(p.size++) = '"';
  p.text.at(p.size++) = ':';
  return p;
}

using format::ModuleField;
using format::NodeField;
using format::TensorMetaField;
using format::TensorSpecField;
constexpr KeyPrefix kNodeName = prefix('{', format::kNodeFields, NodeField::Name);
constexpr KeyPrefix kNodeOp = prefix(',', format::kNodeFields, NodeField::Op);
constexpr KeyPrefix kNodeTarget = prefix(',', format::kNodeFields, NodeField::Target);
constexpr KeyPrefix kNodeArgs = prefix(',', format::kNodeFields, NodeField::Args);
constexpr KeyPrefix kNodeKwargs = prefix(',', format::kNodeFields, NodeField::Kwargs);
constexpr KeyPrefix kNodeMeta = prefix(',', format::kNodeFields, NodeField::Meta);
constexpr KeyPrefix kMetaShape = prefix('{', format::kTensorMetaFields, TensorMetaField::Shape);
constexpr KeyPrefix kMetaDtype = prefix(',', format::kTensorMetaFields, TensorMetaField::Dtype);
constexpr KeyPrefix kMetaStride = prefix(',', format::kTensorMetaFields, TensorMetaField::Stride);
constexpr KeyPrefix kMetaDevice = prefix(',', format::kTensorMetaFields, TensorMetaField::Device);
constexpr KeyPrefix kSpecName = prefix('{', format::kTensorSpecFields, TensorSpecField::Name);
constexpr KeyPrefix kSpecShape = prefix(',', format::kTensorSpecFields, TensorSpecField::Shape);
constexpr KeyPrefix kSpecDtype = prefix(',', format::kTensorSpecFields, TensorSpecField::Dtype);
constexpr KeyPrefix kSpecData = prefix(',', format::kTensorSpecFields, TensorSpecField::Data);
constexpr KeyPrefix kSpecStride = prefix(',', format::kTensorSpecFields, TensorSpecField::Stride);
constexpr KeyPrefix kSpecDevice = prefix(',', format::kTensorSpecFields, TensorSpecField::Device);

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
    out_ += kNodeName.view();
    append_json_string(out_, d.name);
    out_ += kNodeOp.view();
    out_ += '"';
    out_ += op_kind_name(d.op);
    out_ += '"';
    out_ += kNodeTarget.view();
    append_json_string(out_, g.target(n));
    for (NodeId input : d.inputs)
      if (g.is_alive(input) && !written_[input])
        throw WriteError{
            d.name, "uses '" + g.name(input) + "' before it is defined (stable_topological_sort() orders the graph)"};
    out_ += kNodeArgs.view();
    try {
      array(g, d.args);
      out_ += kNodeKwargs.view();
      out_ += '{';
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
    out_ += '}';  // the kwargs' end
    out_ += kNodeMeta.view();
    out_ += '{';
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
    // Not per node: the keys are put together as they go.
    auto field = [this](char open, ModuleField f) {
      out_ += open;
      out_ += '"';
      out_ += format::key(format::kModuleFields, f);
      out_ += "\":";
    };
    field('{', ModuleField::Path);
    append_json_string(out_, m.path);
    field(',', ModuleField::Class);
    append_json_string(out_, m.class_name);
    field(',', ModuleField::Parameters);
    tensor_specs(m.parameters);
    field(',', ModuleField::Buffers);
    tensor_specs(m.buffers);
    if (!m.attributes_json.empty()) {
      field(',', ModuleField::Attributes);
      out_ += m.attributes_json;
    }
    if (!m.origin.empty()) {
      field(',', ModuleField::Origin);
      append_json_string(out_, m.origin);
    }
    if (!m.opaque.empty()) {
      field(',', ModuleField::Opaque);
      append_json_string(out_, m.opaque);
    }
    if (m.graph) {
      field(',', ModuleField::Graph);
      out_ += '{';
      out_ += '"';
      out_ += format::key(format::kModuleGraphFields, format::ModuleGraphField::Nodes);
      out_ += "\":";
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
        out_ += kMetaShape.view();
        dims(v.tensor.shape);
        out_ += kMetaDtype.view();
        append_json_string(out_, v.tensor.dtype.str());
        out_ += kMetaStride.view();
        dims(v.tensor.stride);
        out_ += kMetaDevice.view();
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
      out_ += kSpecName.view();
      append_json_string(out_, specs[i].name);
      out_ += kSpecShape.view();
      dims(specs[i].shape);
      out_ += kSpecDtype.view();
      append_json_string(out_, specs[i].dtype.str());
      if (specs[i].data) {
        out_ += kSpecData.view();
        append_json_string(out_, *specs[i].data);
      }
      if (specs[i].stride) {
        out_ += kSpecStride.view();
        dims(*specs[i].stride);
      }
      if (!specs[i].device.empty()) {
        out_ += kSpecDevice.view();
        append_json_string(out_, specs[i].device);
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
  // One key per line at the top (docs/FORMAT.md §5).
  using format::DocumentField;
  auto field = [&out](const char* before, DocumentField f) {
    out += before;
    out += '"';
    out += format::key(format::kDocumentFields, f);
    out += "\": ";
  };
  field("{\n", DocumentField::Format);
  out += "\"graft-graph\"";
  field(",\n", DocumentField::Version);
  append_int(out, kGraphFormatVersion);
  field(",\n", DocumentField::Meta);
  out += gm.meta_json.empty() ? "{}" : gm.meta_json;
  field(",\n", DocumentField::Modules);
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
    field(",\n", DocumentField::Nodes);
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
