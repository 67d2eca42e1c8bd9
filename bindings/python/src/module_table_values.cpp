#include "module_table_values.hpp"

#include <fmt/format.h>

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

std::vector<TensorSpec> tensor_specs(py::handle value, const std::string& where) {
  std::vector<TensorSpec> out;
  std::size_t i = 0;
  for (py::handle t : list_of(value, where)) {
    const std::string at = fmt::format("{}[{}]", where, i++);
    if (!py::isinstance<py::dict>(t)) refuse(at, "expected a tensor entry (a dict)");
    TensorSpec spec;
    std::array<bool, 3> seen{};
    for (auto [key, field] : py::cast<py::dict>(t)) {
      const std::string name = text(key, at + "<key>");
      const std::string here = at + "." + name;
      if (name == "name") spec.name = text(field, here), seen[0] = true;
      else if (name == "shape") spec.shape = shape(field, here), seen[1] = true;
      else if (name == "dtype") spec.dtype = InternedString(text(field, here)), seen[2] = true;
      else if (name == "data") spec.data = text(field, here);
      else refuse(here, "unknown key (a tensor has name, shape, dtype and data)");
    }
    for (std::size_t k = 0; k < seen.size(); ++k)
      if (!seen[k]) refuse(at, fmt::format("missing key '{}'", std::array{"name", "shape", "dtype"}[k]));
    if (spec.name.empty() || spec.name.find('.') != std::string::npos)
      refuse(at + ".name", "a parameter or buffer name is one non-empty segment without dots");
    out.push_back(std::move(spec));
  }
  return out;
}

ModuleInfo module(Codec& codec, py::handle entry, const std::string& at) {
  if (!py::isinstance<py::dict>(entry)) refuse(at, "expected a module entry (a dict)");
  ModuleInfo info;
  std::array<bool, 4> seen{};
  for (auto [key, field] : py::cast<py::dict>(entry)) {
    const std::string name = text(key, at + "<key>");
    const std::string here = at + "." + name;
    if (name == "path") info.path = text(field, here), seen[0] = true;
    else if (name == "class") info.class_name = text(field, here), seen[1] = true;
    else if (name == "parameters") info.parameters = tensor_specs(field, here), seen[2] = true;
    else if (name == "buffers") info.buffers = tensor_specs(field, here), seen[3] = true;
    else if (name == "attributes") {
      if (!py::isinstance<py::dict>(field)) refuse(here, "expected a dict of the module's settings");
      info.attributes_json = codec.settings_json(field, here);
    } else if (name == "origin" || name == "opaque") {
      std::string value = text(field, here);
      if (value.empty()) refuse(here, "expected a non-empty string");
      (name == "origin" ? info.origin : info.opaque) = std::move(value);
    } else {
      refuse(here, "unknown key (graphs come by path, beside the entries)");
    }
  }
  for (std::size_t k = 0; k < seen.size(); ++k)
    if (!seen[k]) refuse(at, fmt::format("missing key '{}'", std::array{"path", "class", "parameters", "buffers"}[k]));
  return info;
}

py::list tensors_to_python(const std::vector<TensorSpec>& specs) {
  py::list out;
  for (const TensorSpec& t : specs) {
    py::list shape;
    for (const Dim& d : t.shape)
      shape.append(d.is_symbolic() ? py::object(py::str(d.symbol_name())) : py::object(py::int_(d.value())));
    py::dict entry;
    entry["name"] = t.name;
    entry["shape"] = shape;
    entry["dtype"] = std::string(t.dtype);
    if (t.data) entry["data"] = *t.data;
    out.append(entry);
  }
  return out;
}

}  // namespace

py::list module_table_to_python(const ModuleTable& table, const MakeFxGraph& make) {
  static const py::object* loads = new py::object(py::module_::import("json").attr("loads"));  // never freed
  py::list out;
  for (const ModuleInfo& m : table.entries()) {
    py::dict entry;
    entry["path"] = m.path;
    entry["class"] = m.class_name;
    entry["parameters"] = tensors_to_python(m.parameters);
    entry["buffers"] = tensors_to_python(m.buffers);
    if (!m.attributes_json.empty()) entry["attributes"] = (*loads)(m.attributes_json);  // the IR keeps them as text
    if (!m.origin.empty()) entry["origin"] = m.origin;
    if (!m.opaque.empty()) entry["opaque"] = m.opaque;
    if (m.graph) entry["graph"] = make(*m.graph);
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
