// Python's spelling of IR values: repr(float), repr(str), and FX's repr of node arguments, so that
// graft prints and writes what torch.fx prints and graft_fx writes, byte for byte.
#include "graft/ir/python_repr.hpp"

#include <simdjson.h>
#include <charconv>
#include <cmath>
#include <system_error>

namespace graft {

namespace detail {

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_python_float(std::string& out, double v) {
  // std::to_chars in scientific form gives the shortest round-tripping digits; we then lay
  // them out the way Python's repr does: positional for exponents in [-4, 16), else scientific.
  char buf[40];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view text(buf, static_cast<std::size_t>(r.ptr - buf));
  bool negative = text.front() == '-';
  if (negative) text.remove_prefix(1);
  std::size_t e_pos = text.find('e');
  std::string digits;
  for (char c : text.substr(0, e_pos))
    if (c != '.') digits += c;
  int exponent = 0;
  std::string_view exp_text = text.substr(e_pos + 1);
  std::from_chars(exp_text.data() + (exp_text.front() == '+' ? 1 : 0), exp_text.data() + exp_text.size(), exponent);

  if (negative) out += '-';
  if (exponent >= -4 && exponent < 16) {
    if (exponent >= 0) {
      std::size_t int_len = static_cast<std::size_t>(exponent) + 1;
      if (digits.size() <= int_len) {
        out += digits;
        out.append(int_len - digits.size(), '0');
        out += ".0";
      } else {
        out.append(digits, 0, int_len);
        out += '.';
        out.append(digits, int_len, std::string::npos);
      }
    } else {
      out += "0.";
      out.append(static_cast<std::size_t>(-exponent - 1), '0');
      out += digits;
    }
    return;
  }
  out += digits[0];
  if (digits.size() > 1) {
    out += '.';
    out.append(digits, 1, std::string::npos);
  }
  out += exponent < 0 ? "e-" : "e+";
  int magnitude = exponent < 0 ? -exponent : exponent;
  if (magnitude < 10) out += '0';
  append_int(out, magnitude);
}

bool valid_utf8(std::string_view s) { return simdjson::validate_utf8(s.data(), s.size()); }

void append_python_str(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '\'';
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '\\': out += "\\\\"; continue;
      case '\'': out += "\\'"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      default: break;
    }
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      continue;
    }
    // A whole UTF-8 sequence is shown as is; any other byte as \xNN.
    const std::size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    if (c >= 0x80 && len > 1 && i + len <= s.size() && valid_utf8(s.substr(i, len))) {
      out.append(s.substr(i, len));
      i += len - 1;
      continue;
    }
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
  }
  out += '\'';
}

}  // namespace detail

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
    case ArgKind::Ellipsis: return "Ellipsis";
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

}  // namespace graft
