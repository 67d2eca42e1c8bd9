// Binding a call's arguments to an operator schema.
#include "graft/ir/schema_binding.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>

#include "graft/ir/target_name.hpp"

namespace graft {

namespace {

std::optional<Argument> number(std::string_view t) {
  if (t.empty()) return std::nullopt;
  const std::string s(t);
  char* end = nullptr;
  if (s.find_first_of(".eE") == std::string::npos && s != "inf" && s != "-inf") {
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (end == s.c_str() + s.size()) return Argument(static_cast<std::int64_t>(v));
    return std::nullopt;
  }
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() + s.size()) return Argument(v);
  return std::nullopt;
}

std::string_view trim_spaces(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

constexpr std::string_view kKnownTypes[] = {"Tensor",       "int",     "SymInt",     "float",           "bool",
                                            "str",          "Scalar",  "ScalarType", "Device",          "Layout",
                                            "MemoryFormat", "Dimname", "complex",    "c10::string_view"};

bool known_type(std::string_view type) {
  return std::find(std::begin(kKnownTypes), std::end(kKnownTypes), type) != std::end(kKnownTypes);
}

bool fits(const Argument& v, std::string_view type, const Graph* g) {
  if (type.ends_with('?')) return v.is_none() || fits(v, type.substr(0, type.size() - 1), g);
  if (type == "t" || type == "Any" || type.starts_with("Union") || type.starts_with("Optional")) return true;
  if (v.is_node()) {
    // A node's value may be a tensor, a number or a list, unless its meta says it is a tensor.
    const bool tensor = g != nullptr && g->meta(v.node_id()).tensor_meta.kind == ValueMeta::Kind::Tensor;
    return !tensor || type == "Tensor" || (!known_type(type) && !type.ends_with(']'));
  }
  if (type.ends_with(']')) {
    const std::size_t open = type.rfind('[');
    const std::string_view item = type.substr(0, open);
    const std::string_view size = type.substr(open + 1, type.size() - open - 2);
    if (const std::vector<Argument>* items = v.items(); items && (v.holds<List>() || v.holds<Tuple>())) {
      return std::all_of(items->begin(), items->end(), [&](const Argument& a) { return fits(a, item, g); });
    }
    // `int[2] stride=1`: one int stands for a list of equal items when the size is given
    return !size.empty() && v.holds<std::int64_t>() && (item == "int" || item == "SymInt");
  }
  // A type this reader does not know (Generator, Storage, Stream, ...) accepts what it is given;
  // the known value types below go only where they can.
  if (!known_type(type)) return true;
  switch (v.kind()) {
    case ArgKind::None: return false;
    case ArgKind::Bool: return type == "bool" || type == "Scalar" || type == "Tensor";
    case ArgKind::Int:
      return type == "int" || type == "SymInt" || type == "Scalar" || type == "float" || type == "Tensor" ||
          type == "complex";
    case ArgKind::Float: return type == "float" || type == "Scalar" || type == "Tensor" || type == "complex";
    case ArgKind::String: return type == "str" || type == "Dimname" || type == "c10::string_view";
    case ArgKind::DType: return type == "ScalarType";
    case ArgKind::Device: return type == "Device";
    case ArgKind::Layout: return type == "Layout";
    case ArgKind::MemoryFormat: return type == "MemoryFormat";
    default: break;
  }
  return false;
}

}  // namespace

std::optional<Argument> schema_default(const SchemaArgument& a) {
  if (!a.default_value) return std::nullopt;
  const std::string& text = *a.default_value;
  if (text == "None") return Argument{};
  if (text == "True") return Argument(true);
  if (text == "False") return Argument(false);
  if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') && text.back() == text.front())
    return Argument(text.substr(1, text.size() - 2));
  // Enum defaults print as their number in c10's enums (`MemoryFormat memory_format=0`,
  // `ScalarType? dtype=4`).
  if (a.type.starts_with("MemoryFormat") || a.type.starts_with("ScalarType") || a.type.starts_with("Layout")) {
    static constexpr std::string_view kMemoryFormats[] = {"contiguous_format", "preserve_format", "channels_last",
                                                          "channels_last_3d"};
    static constexpr std::string_view kScalarTypes[] = {
        "uint8",     "int8",      "int16",      "int32", "int64", "float16", "float32", "float64",
        "complex32", "complex64", "complex128", "bool",  "qint8", "quint8",  "qint32",  "bfloat16"};
    static constexpr std::string_view kLayouts[] = {"strided", "sparse_coo"};
    std::size_t i = 0;
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    i = static_cast<std::size_t>(std::stoul(text));
    if (a.type.starts_with("MemoryFormat") && i < std::size(kMemoryFormats))
      return Argument(MemoryFormat{std::string(kMemoryFormats[i])});
    if (a.type.starts_with("ScalarType") && i < std::size(kScalarTypes))
      return Argument(DType{std::string(kScalarTypes[i])});
    if (a.type.starts_with("Layout") && i < std::size(kLayouts)) return Argument(Layout{std::string(kLayouts[i])});
    return std::nullopt;
  }
  const bool int_list = a.type.starts_with("int[") || a.type.starts_with("SymInt[");
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    std::vector<Argument> items;
    std::string_view body = std::string_view(text).substr(1, text.size() - 2);
    while (!trim_spaces(body).empty()) {
      const auto comma = body.find(',');
      std::optional<Argument> v = number(trim_spaces(body.substr(0, comma)));
      if (!v) return std::nullopt;
      items.push_back(std::move(*v));
      if (comma == std::string_view::npos) break;
      body.remove_prefix(comma + 1);
    }
    return Argument::list(std::move(items));
  }
  std::optional<Argument> v = number(text);
  if (v && int_list) {
    // `int[2] stride=1`: torch prints a list of equal items as one number
    const auto open = a.type.find('['), close = a.type.find(']');
    const std::string n = a.type.substr(open + 1, close - open - 1);
    if (n.empty() || n.size() > 3 || n.find_first_not_of("0123456789") != std::string::npos ||
        !v->holds<std::int64_t>())
      return std::nullopt;
    return Argument::list(std::vector<Argument>(static_cast<std::size_t>(std::stoul(n)), *v));
  }
  return v;
}

namespace {

bool is_int_list(std::string_view type) {
  const std::string t = without_alias(type);
  return (t.starts_with("int[") || t.starts_with("SymInt[")) && t.ends_with("]");
}

}  // namespace

bool bind_arguments(const OpSchema& schema, const std::vector<Argument>& args, const Kwargs& kwargs,
                    BoundArguments& out, std::string* why, bool python_names, bool int_list_varargs) {
  auto fail = [why](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  const auto& params = schema.arguments;
  out.assign(params.size(), std::nullopt);
  std::size_t positional = 0;
  while (positional < params.size() && !params[positional].kwarg_only) ++positional;
  // Python's rule: a single positional int list (after the receiver) may be spelled as
  // varargs, `x.view(2, -1)` for `view(self, SymInt[] size)`, `torch.zeros(2, 3)`.
  const std::size_t list_at = positional >= 1 && params[0].name == "self" ? 1 : 0;
  if (int_list_varargs && positional == list_at + 1 && is_int_list(params[list_at].type) && args.size() > list_at) {
    bool all_sizes = true;
    for (std::size_t i = list_at; i < args.size(); ++i)
      all_sizes = all_sizes && (args[i].holds<std::int64_t>() || args[i].is_node());
    // one node alone may be the whole list (`x.view(x.size())`): only several, or an int, are varargs
    if (all_sizes && (args.size() > list_at + 1 || args[list_at].holds<std::int64_t>())) {
      std::vector<Argument> packed(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(list_at));
      packed.push_back(Argument::list({args.begin() + static_cast<std::ptrdiff_t>(list_at), args.end()}));
      return bind_arguments(schema, packed, kwargs, out, why, python_names, false);
    }
  }
  if (args.size() > positional)
    return fail(std::to_string(args.size()) + " positional arguments, the schema takes at most " +
                std::to_string(positional));
  for (std::size_t i = 0; i < args.size(); ++i) out[i] = args[i];
  for (const auto& [key, value] : kwargs) {
    auto it = std::find_if(params.begin(), params.end(), [&k = key](const SchemaArgument& a) { return a.name == k; });
    if (it == params.end() && python_names && key == "input")
      it = std::find_if(params.begin(), params.end(), [](const SchemaArgument& a) { return a.name == "self"; });
    if (it == params.end()) return fail("no argument named " + quoted_text(key));
    const auto i = static_cast<std::size_t>(it - params.begin());
    if (out[i]) return fail("argument " + quoted_text(key) + " given twice");
    out[i] = value;
  }
  return true;
}

std::string without_alias(std::string_view type) {
  std::string out;
  int depth = 0;
  for (std::size_t i = 0; i < type.size(); ++i) {
    const char c = type[i];
    if (c == '(' && depth == 0 && !out.empty() && (out.ends_with("Tensor") || out.ends_with("]") || out == "t")) {
      const std::size_t close = type.find(')', i);
      if (close == std::string_view::npos) break;
      i = close;
      continue;
    }
    if (c == '(') ++depth;
    if (c == ')') --depth;
    out += c;
  }
  return out;
}

bool same_parameter(const SchemaArgument& a, const SchemaArgument& b) {
  return a.name == b.name && a.kwarg_only == b.kwarg_only && without_alias(a.type) == without_alias(b.type);
}

bool argument_fits(const Argument& value, std::string_view type, const Graph* g) {
  return fits(value, without_alias(type), g);
}

const OpSchema* python_signature(std::string_view target) {
  const std::string_view text = python_signature_text(target);
  if (text.empty()) return nullptr;
  // Parsed once each; the table is fixed, so entries are never removed and pointers stay valid.
  static std::mutex mutex;
  static std::map<std::string_view, std::optional<OpSchema>> parsed;
  const std::lock_guard<std::mutex> lock(mutex);
  auto [it, fresh] = parsed.try_emplace(text);
  if (fresh) {
    Result<OpSchema> schema = parse_op_schema(text);
    if (schema) it->second = std::move(schema).value();
  }
  return it->second ? &*it->second : nullptr;
}

CallSchemas schemas_for_call(const OpSchemaRegistry& registry, OpKind op, std::string_view target) {
  CallSchemas out;
  if (op == OpKind::CallMethod) {
    if (is_aten_method(target)) out.candidates = registry.overloads("aten::" + std::string(target));
    out.int_list_varargs = true;
    return out;
  }
  if (op != OpKind::CallFunction) return out;
  OpOverloadName parts;
  if (parse_op_overload(target, parts)) {
    if (!parts.overload.empty()) {
      if (const OpSchema* s = registry.find(target)) out.candidates.push_back(s);
    } else {
      out.candidates = registry.overloads(std::string(parts.ns) + "::" + std::string(parts.op));
    }
    return out;
  }
  if (const std::string_view aten = aten_operator_of(target); !aten.empty()) {
    out.candidates = registry.overloads(aten);
    out.python_names = true;
    out.int_list_varargs = true;
  } else if (const OpSchema* python = python_signature(target)) {
    out.candidates.push_back(python);
  }
  return out;
}

std::vector<BoundCall> bind_call(const OpSchemaRegistry& registry, const Graph& g, NodeId n, std::string* why) {
  std::vector<BoundCall> out;
  const CallSchemas call = schemas_for_call(registry, g.op(n), g.target(n));
  bool explained = false;
  auto refuse = [&](std::string reason) {
    if (why != nullptr && !explained) *why = std::move(reason);
    explained = true;
  };
  for (const OpSchema* schema : call.candidates) {
    BoundCall bound{schema, {}};
    std::string reason;
    if (!bind_arguments(*schema, g.args(n), g.kwargs(n), bound.values, &reason, call.python_names,
                        call.int_list_varargs)) {
      refuse(to_string(*schema) + ": " + reason);
      continue;
    }
    bool ok = true;
    for (std::size_t i = 0; ok && i < schema->arguments.size(); ++i) {
      const SchemaArgument& a = schema->arguments[i];
      if (!bound.values[i]) {
        ok = a.default_value.has_value();
        if (!ok) refuse(to_string(*schema) + ": argument " + quoted_text(a.name) + " is required");
      } else if (!argument_fits(*bound.values[i], a.type, &g)) {
        ok = false;
        refuse(to_string(*schema) + ": argument " + quoted_text(a.name) + " is not a " + a.type);
      }
    }
    if (ok) out.push_back(std::move(bound));
  }
  return out;
}

}  // namespace graft
