#include "module_table_values.hpp"

#include <fmt/format.h>

#include "graft/io/format_fields.hpp"

#include <array>
#include <string>
#include <string_view>

namespace graft::python {
namespace {

[[noreturn]] void refuse(const std::string& where, std::string_view why) {
  throw py::value_error(fmt::format("{}: {}", where, why));
}

std::string text(py::handle value, const std::string& where) {
  if (!py::isinstance<py::str>(value)) refuse(where, "expected a string");
  return value.cast<std::string>();
}

py::list list_of(py::handle value, const std::string& where) {
  if (!py::isinstance<py::list>(value) && !py::isinstance<py::tuple>(value)) refuse(where, "expected a list");
  return py::list(py::reinterpret_borrow<py::object>(value));
}

Dims shape(py::handle value, const std::string& where) {
  Dims out;
  std::size_t i = 0;
  for (py::handle d : list_of(value, where)) {
    const std::string at = fmt::format("{}[{}]", where, i++);
    if (py::isinstance<py::str>(d)) {
      out.push_back(Dim::symbol(d.cast<std::string>()));
    } else if (py::isinstance<py::int_>(d) && !py::isinstance<py::bool_>(d)) {
      const auto size = d.cast<std::int64_t>();
      if (size < 0) refuse(at, "a size cannot be negative");
      out.push_back(Dim(size));
    } else {
      refuse(at, "expected a size (an integer) or a symbol (a string)");
    }
  }
  return out;
}

/// The position of `name` among `fields`' keys; refuses an unknown key, listing them.
template <std::size_t N>
std::size_t field_of(const std::array<format::Field, N>& fields, const std::string& name, const std::string& where) {
  for (std::size_t i = 0; i < N; ++i)
    if (fields[i].key == name) return i;
  std::string known;
  for (const format::Field& f : fields) known += (known.empty() ? "" : ", ") + std::string(f.key);
  refuse(where, fmt::format("unknown key (expected: {})", known));
}

template <std::size_t N>
void require_fields(const std::array<format::Field, N>& fields, const std::array<bool, N>& seen,
                    const std::string& where) {
  for (std::size_t i = 0; i < N; ++i)
    if (fields[i].required && !seen[i]) refuse(where, fmt::format("missing key '{}'", fields[i].key));
}

std::vector<TensorSpec> tensor_specs(py::handle value, const std::string& where) {
  using format::TensorSpecField;
  std::vector<TensorSpec> out;
  std::size_t i = 0;
  for (py::handle t : list_of(value, where)) {
    const std::string at = fmt::format("{}[{}]", where, i++);
    if (!py::isinstance<py::dict>(t)) refuse(at, "expected a tensor entry (a dict)");
    TensorSpec spec;
    std::array<bool, format::kTensorSpecFields.size()> seen{};
    for (auto [key, field] : py::cast<py::dict>(t)) {
      const std::string name = text(key, at + "<key>");
      const std::string here = at + "." + name;
      const std::size_t f = field_of(format::kTensorSpecFields, name, here);
      seen.at(f) = true;
      switch (static_cast<TensorSpecField>(f)) {
        case TensorSpecField::Name: spec.name = text(field, here); break;
        case TensorSpecField::Shape: spec.shape = shape(field, here); break;
        case TensorSpecField::Dtype: spec.dtype = InternedString(text(field, here)); break;
        case TensorSpecField::Data: spec.data = text(field, here); break;
        case TensorSpecField::Stride: spec.stride = shape(field, here); break;
        case TensorSpecField::Device: spec.device = text(field, here); break;
      }
    }
    require_fields(format::kTensorSpecFields, seen, at);
    if (spec.name.empty() || spec.name.find('.') != std::string::npos)
      refuse(at + ".name", "a parameter or buffer name is one non-empty segment without dots");
    if (spec.stride && spec.stride->size() != spec.shape.size())
      refuse(at + ".stride", "one stride per dim of the shape");
    out.push_back(std::move(spec));
  }
  return out;
}

ModuleInfo module(Codec& codec, py::handle entry, const std::string& at) {
  using format::ModuleField;
  if (!py::isinstance<py::dict>(entry)) refuse(at, "expected a module entry (a dict)");
  ModuleInfo info;
  std::array<bool, format::kModuleFields.size()> seen{};
  for (auto [key, field] : py::cast<py::dict>(entry)) {
    const std::string name = text(key, at + "<key>");
    const std::string here = at + "." + name;
    const std::size_t f = field_of(format::kModuleFields, name, here);
    seen.at(f) = true;
    switch (static_cast<ModuleField>(f)) {
      case ModuleField::Path: info.path = text(field, here); break;
      case ModuleField::Class: info.class_name = text(field, here); break;
      case ModuleField::Parameters: info.parameters = tensor_specs(field, here); break;
      case ModuleField::Buffers: info.buffers = tensor_specs(field, here); break;
      case ModuleField::Attributes:
        if (!py::isinstance<py::dict>(field)) refuse(here, "expected a dict of the module's settings");
        info.attributes_json = codec.settings_json(field, here);
        break;
      case ModuleField::Origin:
      case ModuleField::Opaque: {
        std::string value = text(field, here);
        if (value.empty()) refuse(here, "expected a non-empty string");
        (f == format::at(ModuleField::Origin) ? info.origin : info.opaque) = std::move(value);
        break;
      }
      case ModuleField::Graph: refuse(here, "a module's graph comes by path, beside the entries");
    }
  }
  require_fields(format::kModuleFields, seen, at);
  return info;
}

py::list tensors_to_python(const std::vector<TensorSpec>& specs) {
  py::list out;
  for (const TensorSpec& t : specs) {
    py::list shape;
    for (const Dim& d : t.shape)
      shape.append(d.is_symbolic() ? py::object(py::str(d.symbol_name())) : py::object(py::int_(d.value())));
    using format::TensorSpecField;
    const auto& keys = format::kTensorSpecKeys;
    py::dict entry;
    entry[py::str(keys[format::at(TensorSpecField::Name)])] = t.name;
    entry[py::str(keys[format::at(TensorSpecField::Shape)])] = shape;
    entry[py::str(keys[format::at(TensorSpecField::Dtype)])] = std::string(t.dtype);
    if (t.data) entry[py::str(keys[format::at(TensorSpecField::Data)])] = *t.data;
    if (t.stride) {
      py::list stride;
      for (const Dim& d : *t.stride)
        stride.append(d.is_symbolic() ? py::object(py::str(d.symbol_name())) : py::object(py::int_(d.value())));
      entry[py::str(keys[format::at(TensorSpecField::Stride)])] = stride;
    }
    if (!t.device.empty()) entry[py::str(keys[format::at(TensorSpecField::Device)])] = t.device;
    out.append(entry);
  }
  return out;
}

}  // namespace

py::list module_table_to_python(const ModuleTable& table, const MakeFxGraph& make) {
  static const py::object* loads = new py::object(py::module_::import("json").attr("loads"));  // never freed
  py::list out;
  for (const ModuleInfo& m : table.entries()) {
    using format::ModuleField;
    auto key = [](ModuleField f) { return py::str(format::kModuleKeys[format::at(f)]); };
    py::dict entry;
    entry[key(ModuleField::Path)] = m.path;
    entry[key(ModuleField::Class)] = m.class_name;
    entry[key(ModuleField::Parameters)] = tensors_to_python(m.parameters);
    entry[key(ModuleField::Buffers)] = tensors_to_python(m.buffers);
    if (!m.attributes_json.empty())
      entry[key(ModuleField::Attributes)] = (*loads)(m.attributes_json);  // the IR keeps them as text
    if (!m.origin.empty()) entry[key(ModuleField::Origin)] = m.origin;
    if (!m.opaque.empty()) entry[key(ModuleField::Opaque)] = m.opaque;
    if (m.graph) entry[key(ModuleField::Graph)] = make(*m.graph);
    out.append(entry);
  }
  return out;
}

ModuleTable module_table_from_python(Codec& codec, py::handle entries, py::handle graphs, const ConvertGraph& convert) {
  ModuleTable table;
  const py::list list = list_of(entries, "the module table");
  table.reserve(list.size());
  std::size_t i = 0;
  for (py::handle entry : list) {
    const std::string at = fmt::format("module table[{}]", i++);
    if (Status s = table.add(module(codec, entry, at)); !s) refuse(at, s.message());
  }
  if (graphs.is_none()) return table;
  if (!py::isinstance<py::dict>(graphs)) refuse("the module graphs", "expected a dict of path -> torch.fx.Graph");
  for (auto [key, fx_graph] : py::cast<py::dict>(graphs)) {
    const std::string path = text(key, "the module graphs<key>");
    ModuleInfo* m = table.edit(path);
    if (m == nullptr) refuse(fmt::format("the graph of module '{}'", path), "the module table has no such module");
    if (!m->opaque.empty()) refuse(fmt::format("module '{}'", path), "a module with a graph is not opaque");
    m->graph.emplace();
    convert(fx_graph, *m->graph);
  }
  return table;
}

}  // namespace graft::python
