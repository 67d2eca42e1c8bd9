#include "python_values.hpp"

#include <fmt/format.h>

#include <cmath>

namespace graft::python {

namespace {

// Deeper lists, tuples and dicts are refused, not converted: the conversion recurses, and so do
// torch.fx's own printer and graft's graph files (graph text refuses the same depth).
constexpr int kMaxNesting = 200;

/// `node 'x'.args[1]` of `node 'x'.args[1][0][0]...`: where a too deeply nested value starts.
std::string outermost(const std::string& where) {
  const std::size_t inner = where.find("][");
  return inner == std::string::npos ? where : where.substr(0, inner + 1);
}

py::object attr(const char* module, const char* name) { return py::module_::import(module).attr(name); }

std::string to_utf8(PyObject* s) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(s, &size);
  if (data == nullptr) throw py::error_already_set();
  return std::string(data, static_cast<std::size_t>(size));
}

Dim to_dim(py::handle d, const char* what) {
  if (py::isinstance<py::int_>(d)) return Dim(d.cast<std::int64_t>());
  if (py::isinstance<py::str>(d)) return Dim::symbol(d.cast<std::string>());
  throw py::value_error(fmt::format("a tensor description's {} holds {}", what, py::repr(d).cast<std::string>()));
}

py::object from_dim(Dim d) {
  if (d.is_symbolic()) return py::str(d.symbol_name());
  return py::int_(d.value());
}

}  // namespace

Codec::Codec()
    : node_type_(attr("torch.fx", "Node")),
      function_name_(attr("graft_fx.export", "function_name")),
      resolve_(attr("graft_fx.importer", "resolve_qualified")),
      encode_arg_(attr("graft_fx.format", "encode_arg")),
      enum_value_(attr("graft_fx.format", "enum_value")),
      node_meta_(attr("graft_fx.export", "node_meta")),
      dumps_(attr("graft_fx.format", "compact_json")),
      meta_value_(attr("graft_fx.importer", "meta_value")),
      tensor_meta_key_(attr("graft_fx.export", "GRAFT_TENSOR_META")) {}

const std::string& Codec::function_name(PyObject* target) {
  auto found = names_.find(target);
  if (found != names_.end()) return found->second;
  const std::string qualified = function_name_(py::handle(target)).cast<std::string>();
  std::vector<std::string>& given = spellings_[qualified];
  std::string name;
  for (const std::string& g : given) {
    const int equal = PyObject_RichCompareBool(functions_.at(g).ptr(), target, Py_EQ);
    if (equal < 0) throw py::error_already_set();
    if (equal == 1) name = g;
  }
  if (name.empty()) {
    name = given.empty() ? qualified : fmt::format("{}#{}", qualified, given.size() + 1);
    given.push_back(name);
    functions_.emplace(name, py::reinterpret_borrow<py::object>(target));
  }
  held_.push_back(py::reinterpret_borrow<py::object>(target));
  return names_.emplace(target, std::move(name)).first->second;
}

py::object Codec::function(const std::string& name) {
  auto found = functions_.find(name);
  if (found != functions_.end()) return found->second;
  py::object f = resolve_(name);
  functions_.emplace(name, f);
  return f;
}

Argument Codec::to_argument(PyObject* v, const std::function<NodeId(PyObject*)>& node_id, const std::string& where) {
  return to_argument(v, node_id, where, 0);
}

Argument Codec::to_argument(PyObject* v, const std::function<NodeId(PyObject*)>& node_id, const std::string& where,
                            int depth) {
  if (v == Py_None) return NoneValue{};
  if (PyBool_Check(v)) return v == Py_True;
  if (PyLong_Check(v)) {
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow != 0)
      throw py::value_error(fmt::format("{}: int {} does not fit in 64 bits", where, py::str(v).cast<std::string>()));
    if (x == -1 && PyErr_Occurred()) throw py::error_already_set();
    return static_cast<std::int64_t>(x);
  }
  if (PyFloat_Check(v)) return PyFloat_AS_DOUBLE(v);
  if (v == Py_Ellipsis) return EllipsisValue{};
  if (PyUnicode_Check(v)) return to_utf8(v);
  if (PyObject_TypeCheck(v, node_type())) return Argument::node(node_id(v));
  const bool container = PyList_Check(v) || PyTuple_Check(v) || PyDict_Check(v) || PySlice_Check(v);
  if (container && depth == kMaxNesting)
    throw py::value_error(fmt::format("{}...: values nested deeper than {} levels", outermost(where), kMaxNesting));
  auto items = [&](PyObject* seq, const char* open) {
    std::vector<Argument> out;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    out.reserve(static_cast<std::size_t>(n));
    PyObject** data = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; ++i)
      out.push_back(to_argument(data[i], node_id, fmt::format("{}{}{}]", where, open, i), depth + 1));
    return out;
  };
  if (PyList_Check(v)) return Argument::list(items(v, "["));
  if (PyTuple_Check(v)) return Argument::tuple(items(v, "["));
  if (PyDict_Check(v)) {
    Dict d;
    PyObject *key = nullptr, *value = nullptr;
    Py_ssize_t pos = 0;
    while (PyDict_Next(v, &pos, &key, &value)) {
      std::string at = fmt::format("{}[{}]", where, py::repr(key).cast<std::string>());
      d.add(to_argument(key, node_id, at + "<key>", depth + 1), to_argument(value, node_id, at, depth + 1));
    }
    return d;
  }
  if (PySlice_Check(v)) {
    auto* s = reinterpret_cast<PySliceObject*>(v);
    return Slice{{to_argument(s->start, node_id, where + ".start", depth + 1),
                  to_argument(s->stop, node_id, where + ".stop", depth + 1),
                  to_argument(s->step, node_id, where + ".step", depth + 1)}};
  }
  return enum_argument(v, where);
}

std::string Codec::settings_json(py::handle settings, const std::string& where) {
  py::dict encoded;
  for (auto [key, value] : py::cast<py::dict>(settings))
    encoded[key] = encode_arg_(value, fmt::format("{}.{}", where, py::str(key).cast<std::string>()));
  return dumps_(encoded).cast<std::string>();
}

Argument Codec::enum_argument(PyObject* v, const std::string& where) {
  auto found = enums_.find(v);
  if (found != enums_.end()) return found->second;
  // graft_fx's encoder names the four torch enums, or raises GraphFormatError for anything else.
  py::dict encoded = encode_arg_(py::handle(v), where);
  if (encoded.size() != 1) throw py::value_error(where + ": unexpected encoding");
  auto [tag, body] = *encoded.begin();
  const std::string kind = tag.cast<std::string>(), name = body.cast<std::string>();
  Argument arg;
  if (kind == "dtype") arg = DType{name};
  else if (kind == "device") arg = Device{name};
  else if (kind == "layout") arg = Layout{name};
  else if (kind == "memory_format") arg = MemoryFormat{name};
  else throw py::value_error(fmt::format("{}: unsupported argument {}", where, py::repr(v).cast<std::string>()));
  if (kind == "device") return arg;  // devices are made per use: caching them by object would keep each one
  held_.push_back(py::reinterpret_borrow<py::object>(v));
  return enums_.emplace(v, std::move(arg)).first->second;
}

py::object Codec::enum_object(const char* tag, const std::string& name) {
  std::string key = fmt::format("{}:{}", tag, name);
  auto found = enum_objects_.find(key);
  if (found != enum_objects_.end()) return found->second;
  py::object value = enum_value_(tag, name);
  enum_objects_.emplace(std::move(key), value);
  return value;
}

py::object Codec::from_argument(const Argument& arg, const std::function<py::object(NodeId)>& node) {
  auto seq = [&](const std::vector<Argument>& items, bool tuple) -> py::object {
    if (tuple) {
      py::tuple out(items.size());
      for (std::size_t i = 0; i < items.size(); ++i) out[i] = from_argument(items[i], node);
      return out;
    }
    py::list out(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) out[i] = from_argument(items[i], node);
    return out;
  };
  switch (arg.kind()) {
    case ArgKind::None: return py::none();
    case ArgKind::Ellipsis: return py::ellipsis();
    case ArgKind::Bool: return py::bool_(arg.get<bool>());
    case ArgKind::Int: return py::int_(arg.get<std::int64_t>());
    case ArgKind::Float: return py::float_(arg.get<double>());
    case ArgKind::String: return py::str(arg.get<std::string>());
    case ArgKind::Node: return node(arg.node_id());
    case ArgKind::DType: return enum_object("dtype", arg.get<DType>().name);
    case ArgKind::Device: return enum_object("device", arg.get<Device>().name);
    case ArgKind::Layout: return enum_object("layout", arg.get<Layout>().name);
    case ArgKind::MemoryFormat: return enum_object("memory_format", arg.get<MemoryFormat>().name);
    case ArgKind::List: return seq(arg.get<List>().items, false);
    case ArgKind::Tuple: return seq(arg.get<Tuple>().items, true);
    case ArgKind::Dict: {
      py::dict out;
      const Dict& d = arg.get<Dict>();
      for (std::size_t i = 0; i < d.size(); ++i) out[from_argument(d.key(i), node)] = from_argument(d.value(i), node);
      return out;
    }
    case ArgKind::Slice: {
      const auto& p = arg.get<Slice>().parts;
      return py::reinterpret_steal<py::object>(PySlice_New(
          from_argument(p[0], node).ptr(), from_argument(p[1], node).ptr(), from_argument(p[2], node).ptr()));
    }
  }
  return py::none();
}

ValueMeta Codec::value_meta(py::handle desc) {
  ValueMeta out;
  if (desc.is_none()) return out;
  if (py::isinstance<py::list>(desc) || py::isinstance<py::tuple>(desc)) {
    out.kind = ValueMeta::Kind::Tuple;
    for (py::handle d : desc) out.elements.push_back(value_meta(d));
    return out;
  }
  py::dict t = py::reinterpret_borrow<py::dict>(desc);
  out.kind = ValueMeta::Kind::Tensor;
  for (py::handle d : t["shape"]) out.tensor.shape.push_back(to_dim(d, "shape"));
  for (py::handle d : t["stride"]) out.tensor.stride.push_back(to_dim(d, "stride"));
  out.tensor.dtype = InternedString(t["dtype"].cast<std::string>());
  out.tensor.device = InternedString(t["device"].cast<std::string>());
  return out;
}

NodeMeta Codec::node_meta(PyObject* fx_node) {
  NodeMeta meta;
  py::tuple parts = node_meta_(py::handle(fx_node));
  meta.tensor_meta = value_meta(parts[0]);
  py::dict free = parts[1];
  for (auto [key, value] : free) meta.extra.emplace_back(key.cast<std::string>(), dumps_(value).cast<std::string>());
  return meta;
}

py::object Codec::describe(const ValueMeta& meta) {
  switch (meta.kind) {
    case ValueMeta::Kind::None: return py::none();
    case ValueMeta::Kind::Tuple: {
      py::list out;
      for (const ValueMeta& e : meta.elements) out.append(describe(e));
      return out;
    }
    case ValueMeta::Kind::Tensor: {
      py::dict out;
      py::list shape, stride;
      for (Dim d : meta.tensor.shape) shape.append(from_dim(d));
      for (Dim d : meta.tensor.stride) stride.append(from_dim(d));
      out["shape"] = shape;
      out["dtype"] = py::str(meta.tensor.dtype.str());
      out["stride"] = stride;
      out["device"] = py::str(meta.tensor.device.str());
      return out;
    }
  }
  return py::none();
}

py::object Codec::meta_value(const std::string& key, const std::string& text) { return meta_value_(key, text); }

}  // namespace graft::python
