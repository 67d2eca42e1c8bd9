// FX-style text views: Python-repr arguments and the print_tabular table.
#include <algorithm>
#include <array>
#include <cmath>

#include "graft/io/json_text.hpp"
#include "graft/io/render.hpp"

namespace graft {

namespace {

std::string python_str(const std::string& s) {
  std::string out;
  detail::append_python_str(out, s);
  return out;
}

std::string join(const Graph& g, const std::vector<Argument>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += format_argument(g, items[i]);
  }
  return out;
}

std::string device_repr(const std::string& name) {
  std::size_t colon = name.find(':');
  if (colon == std::string::npos) return "device(type='" + name + "')";
  return "device(type='" + name.substr(0, colon) + "', index=" + name.substr(colon + 1) + ")";
}

}  // namespace

std::string format_argument(const Graph& g, const Argument& a) {
  switch (a.kind()) {
    case ArgKind::None: return "None";
    case ArgKind::Bool: return a.get<bool>() ? "True" : "False";
    case ArgKind::Int: return std::to_string(a.get<std::int64_t>());
    case ArgKind::Float: {
      double v = a.get<double>();
      if (std::isnan(v)) return "nan";
      if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
      std::string out;
      detail::append_python_float(out, v);
      return out;
    }
    case ArgKind::String: return python_str(a.get<std::string>());
    case ArgKind::Node: return g.is_alive(a.node_id()) ? g.name(a.node_id()) : "<erased>";
    case ArgKind::DType: return "torch." + a.get<DType>().name;
    case ArgKind::Device: return device_repr(a.get<Device>().name);
    case ArgKind::Layout: return "torch." + a.get<Layout>().name;
    case ArgKind::MemoryFormat: return "torch." + a.get<MemoryFormat>().name;
    case ArgKind::List: return "[" + join(g, a.get<List>().items) + "]";
    case ArgKind::Tuple: {
      const auto& items = a.get<Tuple>().items;
      return "(" + join(g, items) + (items.size() == 1 ? ",)" : ")");
    }
    case ArgKind::Slice: return "slice(" + join(g, a.get<Slice>().parts) + ")";
    case ArgKind::Dict: {
      const Dict& d = a.get<Dict>();
      std::string out = "{";
      for (std::size_t i = 0; i < d.size(); ++i) {
        if (i) out += ", ";
        out += format_argument(g, d.key(i)) + ": " + format_argument(g, d.value(i));
      }
      return out + "}";
    }
  }
  return "?";
}

std::string format_args(const Graph& g, NodeId n) { return format_argument(g, Argument::tuple(g.args(n))); }

std::string format_kwargs(const Graph& g, NodeId n) {
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : g.kwargs(n)) {
    if (!first) out += ", ";
    first = false;
    out += python_str(key) + ": " + format_argument(g, value);
  }
  return out + "}";
}

std::string format_value_meta(const ValueMeta& v) {
  switch (v.kind) {
    case ValueMeta::Kind::None: return "";
    case ValueMeta::Kind::Tensor: {
      std::string out = v.tensor.dtype.str() + "[";
      for (std::size_t i = 0; i < v.tensor.shape.size(); ++i) {
        if (i) out += ", ";
        const Dim& d = v.tensor.shape[i];
        out += d.is_symbolic() ? d.symbol_name() : std::to_string(d.value());
      }
      return out + "]";
    }
    case ValueMeta::Kind::Tuple: {
      std::string out = "(";
      for (std::size_t i = 0; i < v.elements.size(); ++i) {
        if (i) out += ", ";
        out += v.elements[i].kind == ValueMeta::Kind::None ? "None" : format_value_meta(v.elements[i]);
      }
      return out + (v.elements.size() == 1 ? ",)" : ")");
    }
  }
  return "";
}

std::string tabular(const Graph& g, bool with_values) {
  const std::size_t cols = with_values ? 6 : 5;
  std::vector<std::array<std::string, 6>> rows;
  rows.push_back({"opcode", "name", "target", "args", "kwargs", "value"});
  for (NodeId n : g.nodes())
    rows.push_back({std::string(op_kind_name(g.op(n))), g.name(n), g.target(n), format_args(g, n), format_kwargs(g, n),
                    with_values ? format_value_meta(g.meta(n).tensor_meta) : std::string()});
  std::array<std::size_t, 6> width{};
  for (const auto& row : rows)
    for (std::size_t c = 0; c < cols; ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  auto emit = [&](const std::array<std::string, 6>& row) {
    std::string line;
    for (std::size_t c = 0; c < cols; ++c) {
      if (c) line += "  ";
      line += row[c];
      if (c + 1 < cols) line.append(width[c] - row[c].size(), ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  };
  emit(rows[0]);
  std::array<std::string, 6> rule;
  for (std::size_t c = 0; c < cols; ++c) rule[c] = std::string(width[c], '-');
  emit(rule);
  for (std::size_t r = 1; r < rows.size(); ++r) emit(rows[r]);
  return out;
}

}  // namespace graft
