#include "graft/io/graph_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include "graft/ir/python_repr.hpp"

namespace graft {

namespace {

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool is_target_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u > ' ' && u != '(' && u != '#' && u != 0x7f;
}

// Words the notation reads as values, so no node may be called so.
bool is_value_word(std::string_view w) {
  return w == "None" || w == "True" || w == "False" || w == "inf" || w == "nan" || w == "torch" || w == "slice" ||
      w == "device" || w == "return" || w == "Ellipsis";
}

constexpr int kMaxNesting = 200;  // lists, tuples and dicts inside each other

// torch's enums other than dtypes, by the name after `torch.`.
bool is_layout(std::string_view s) {
  return s == "strided" || s == "sparse_coo" || s == "sparse_csr" || s == "sparse_csc" || s == "sparse_bsr" ||
      s == "sparse_bsc" || s == "_mkldnn" || s == "jagged";
}
bool is_memory_format(std::string_view s) {
  return s == "contiguous_format" || s == "channels_last" || s == "channels_last_3d" || s == "preserve_format";
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

/// One line of the notation, read left to right; errors carry the line and column.
class LineParser {
 public:
  LineParser(std::string_view line, int line_no, std::string_view source, const Graph& g)
      : s_(line), line_no_(line_no), source_(source), g_(g) {}

  Status error(std::string message) const {
    return Status::error(Diagnostic{.file = std::string(source_),
                                    .line = line_no_,
                                    .column = static_cast<int>(pos_) + 1,
                                    .message = std::move(message)});
  }

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  bool at_end() {
    skip_space();
    return pos_ >= s_.size() || s_[pos_] == '#';
  }
  bool next_is(char c) {
    skip_space();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  Status expect(char c, std::string_view what) {
    if (eat(c)) return Status::ok();
    return error(fmt::format("expected '{}' {}", c, what));
  }
  std::string_view word() {
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < s_.size() && is_name_char(s_[pos_])) ++pos_;
    return s_.substr(start, pos_ - start);
  }
  std::string_view target() {
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < s_.size() && is_target_char(s_[pos_])) ++pos_;
    return s_.substr(start, pos_ - start);
  }
  std::size_t pos() const { return pos_; }
  void set_pos(std::size_t p) { pos_ = p; }

  /// Arguments up to the closing parenthesis (the opening one is read): positional first, then
  /// key=value.
  Status call_arguments(std::vector<Argument>& args, Kwargs& kwargs) {
    if (eat(')')) return Status::ok();
    while (true) {
      skip_space();
      const std::size_t start = pos_;
      const std::string_view key = word();
      if (!key.empty() && eat('=')) {
        for (const auto& kv : kwargs)
          if (kv.first == key) {
            pos_ = start;
            return error(fmt::format("keyword {} given twice", quoted_text(key)));
          }
        Result<Argument> v = value();
        if (!v) return v.status();
        kwargs.emplace_back(std::string(key), std::move(v).value());
      } else {
        pos_ = start;
        if (!kwargs.empty()) return error("a positional argument after keyword arguments");
        Result<Argument> v = value();
        if (!v) return v.status();
        args.push_back(std::move(v).value());
      }
      if (eat(')')) return Status::ok();
      if (Status s = expect(',', "or ')' between arguments"); !s) return s;
    }
  }

  Result<Argument> value() {
    skip_space();
    if (pos_ >= s_.size()) return error("expected a value");
    const char c = s_[pos_];
    if (c == '\'' || c == '"') return string_value();
    if (c == '[' || c == '(' || c == '{') {
      if (depth_ == kMaxNesting) return error(fmt::format("values nested deeper than {}", kMaxNesting));
      ++depth_;
      Result<Argument> v = c == '{' ? dict() : sequence(c == '[' ? ']' : ')');
      --depth_;
      return v;
    }
    if (c == '-' || c == '+' || std::isdigit(static_cast<unsigned char>(c)) != 0) return number();
    const std::size_t start = pos_;
    const std::string_view w = word();
    if (w.empty()) return error(fmt::format("unexpected {}", quoted_text(std::string_view(&c, 1))));
    if (w == "None") return Argument(NoneValue{});
    if (w == "Ellipsis") return Argument(EllipsisValue{});
    if (w == "True") return Argument(true);
    if (w == "False") return Argument(false);
    if (w == "inf") return Argument(std::numeric_limits<double>::infinity());
    if (w == "nan") return Argument(std::numeric_limits<double>::quiet_NaN());
    if (w == "torch" && pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      const std::string name(word());
      if (name.empty()) return error("expected a name after 'torch.'");
      if (is_layout(name)) return Argument(Layout{name});
      if (is_memory_format(name)) return Argument(MemoryFormat{name});
      return Argument(DType{name});
    }
    if ((w == "slice" || w == "device") && pos_ < s_.size() && s_[pos_] == '(') {
      ++pos_;
      std::vector<Argument> args;
      Kwargs kwargs;
      if (Status s = call_arguments(args, kwargs); !s) return s;
      if (w == "slice") {
        if (args.size() != 3 || !kwargs.empty()) {
          pos_ = start;
          return error("slice takes three values: slice(start, stop, step)");
        }
        return Argument(Slice{std::move(args)});
      }
      if (!args.empty()) {
        pos_ = start;
        return error("a device is written device(type='cuda', index=0)");
      }
      return device(std::move(kwargs), start);
    }
    const NodeId n = g_.find(w);
    if (n == kNoNode) {
      pos_ = start;
      return error(fmt::format("no node named {} before this line", quoted_text(w)));
    }
    return Argument::node(n);
  }

 private:
  Result<Argument> device(Kwargs kwargs, std::size_t start) {
    std::string type;
    std::optional<std::int64_t> index;
    bool well_formed = true;
    for (const auto& [key, v] : kwargs) {
      if (key == "type" && v.kind() == ArgKind::String) type = v.get<std::string>();
      else if (key == "index" && v.kind() == ArgKind::Int) index = v.get<std::int64_t>();
      else well_formed = false;
    }
    // torch's device types are plain words (cpu, cuda, mps, ...): `cuda:0` is type and index.
    if (std::any_of(type.begin(), type.end(), [](char c) { return !is_name_char(c); })) well_formed = false;
    if (index && *index < 0) well_formed = false;
    if (!well_formed || type.empty()) {
      pos_ = start;
      return error("a device is written device(type='cuda', index=0)");
    }
    return Argument(Device{index ? type + ":" + std::to_string(*index) : type});
  }

  Result<Argument> number() {
    const std::size_t start = pos_;
    if (s_[pos_] == '-' || s_[pos_] == '+') ++pos_;
    if (s_.substr(pos_, 3) == "inf" && (pos_ + 3 == s_.size() || !is_name_char(s_[pos_ + 3]))) {
      pos_ += 3;
      return Argument(s_[start] == '-' ? -std::numeric_limits<double>::infinity()
                                       : std::numeric_limits<double>::infinity());
    }
    bool is_float = false;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
        ++pos_;
      } else if (c == '.' || c == 'e' || c == 'E') {
        is_float = true;
        ++pos_;
        if ((c == 'e' || c == 'E') && pos_ < s_.size() && (s_[pos_] == '-' || s_[pos_] == '+')) ++pos_;
      } else {
        break;
      }
    }
    std::string_view text = s_.substr(start, pos_ - start);
    if (!text.empty() && text.front() == '+') text.remove_prefix(1);
    const char* first = text.data();
    const char* last = text.data() + text.size();
    if (is_float) {
      double d = 0;
      auto [end, ec] = std::from_chars(first, last, d);
      if (ec == std::errc() && end == last) return Argument(d);
    } else {
      std::int64_t i = 0;
      auto [end, ec] = std::from_chars(first, last, i);
      if (ec == std::errc() && end == last) return Argument(i);
      if (ec == std::errc::result_out_of_range) {
        pos_ = start;
        return error(fmt::format("{} does not fit in 64 bits", text));
      }
    }
    pos_ = start;
    return error(fmt::format("{} is not a number", quoted_text(text)));
  }

  Result<Argument> string_value() {
    const std::size_t start = pos_;
    const char quote = s_[pos_++];
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      char c = s_[pos_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) break;
      c = s_[pos_++];
      switch (c) {
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'x':
        case 'u':
        case 'U': {
          const std::size_t digits = c == 'x' ? 2 : c == 'u' ? 4 : 8;
          std::uint32_t v = 0;
          if (pos_ + digits > s_.size() ||
              std::from_chars(s_.data() + pos_, s_.data() + pos_ + digits, v, 16).ptr != s_.data() + pos_ + digits) {
            pos_ -= 2;
            return error(fmt::format("\\{} needs {} hex digits", c, digits));
          }
          if (c == 'x') {
            out += static_cast<char>(v);  // a byte, as graft's repr writes one
          } else if (v > 0x10ffff || (v >= 0xd800 && v < 0xe000)) {
            pos_ -= 2;
            return error(fmt::format("\\{} escape: U+{:X} is not a Unicode scalar value", c, v));
          } else {
            append_utf8(out, v);
          }
          pos_ += digits;
          break;
        }
        default: pos_ -= 2; return error(fmt::format("unknown escape '\\{}'", c));
      }
    }
    if (pos_ >= s_.size()) {
      pos_ = start;
      return error("string not closed on this line");
    }
    ++pos_;
    return Argument(std::move(out));
  }

  Result<Argument> sequence(char close) {
    ++pos_;
    std::vector<Argument> items;
    bool trailing_comma = false;
    while (!eat(close)) {
      if (at_end()) return error(fmt::format("expected '{}'", close));
      Result<Argument> v = value();
      if (!v) return v.status();
      items.push_back(std::move(v).value());
      trailing_comma = eat(',');
      if (!trailing_comma && !eat(close)) return error(fmt::format("expected ',' or '{}'", close));
      if (!trailing_comma) break;
    }
    if (close == ']') return Argument::list(std::move(items));
    if (items.size() == 1 && !trailing_comma) return std::move(items.front());  // (x) is x, as in Python
    return Argument::tuple(std::move(items));
  }

  Result<Argument> dict() {
    ++pos_;
    Dict d;
    while (!eat('}')) {
      Result<Argument> k = value();
      if (!k) return k.status();
      if (Status s = expect(':', "after a dict key"); !s) return s;
      Result<Argument> v = value();
      if (!v) return v.status();
      d.add(std::move(k).value(), std::move(v).value());
      if (!eat(',')) {
        if (Status s = expect('}', "or ',' in a dict"); !s) return s;
        break;
      }
    }
    return Argument(std::move(d));
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  int line_no_;
  std::string_view source_;
  const Graph& g_;
  int depth_ = 0;
};

Status parse_line(std::string_view line, int line_no, std::string_view source, Graph& g) {
  LineParser p(line, line_no, source, g);
  if (p.at_end()) return Status::ok();
  std::vector<Argument> args;
  Kwargs kwargs;
  const std::size_t start = p.pos();
  const std::string_view first = p.word();
  if (g.output_node() != kNoNode) {
    p.set_pos(start);
    return p.error("nothing may follow the output (return)");
  }
  if (first == "return" && !p.next_is('=')) {
    Result<Argument> v = p.value();
    if (!v) return v.status();
    if (!p.at_end()) return p.error("unexpected text after the returned value");
    args.push_back(std::move(v).value());
    p.set_pos(start);
    if (g.find("output") != kNoNode) return p.error("return makes a node named 'output', and one exists already");
    Result<NodeId> n = g.create_node_named(OpKind::Output, "output", std::move(args), {}, "output");
    if (!n) return p.error(n.status().diagnostic().message);
    return Status::ok();
  }
  if (first.empty()) return p.error("expected a node name");
  const std::string name(first);
  if (is_value_word(name)) {
    p.set_pos(start);
    return p.error(fmt::format("{} is a value in this notation, not a node name", quoted_text(name)));
  }
  if (Status s = p.expect('=', "after the node name"); !s) return s;
  const std::size_t op_at = p.pos();
  const std::string_view op_text = p.word();
  OpKind op;
  if (!parse_op_kind(op_text, op)) {
    p.set_pos(op_at);
    p.skip_space();
    return p.error("expected an op: placeholder, get_attr, call_function, call_method, call_module or output");
  }
  std::string target(p.target());
  if (target.empty()) {
    if (op != OpKind::Placeholder && op != OpKind::Output) return p.error("expected a target after the op");
    target = op == OpKind::Output ? "output" : name;
  }
  if (p.eat('(')) {
    if (Status s = p.call_arguments(args, kwargs); !s) return s;
  }
  if (!p.at_end()) return p.error("unexpected text after the node");
  p.set_pos(start);
  if (g.find(name) != kNoNode) return p.error(fmt::format("a node named {} already exists", quoted_text(name)));
  Result<NodeId> n = g.create_node_named(op, target, std::move(args), std::move(kwargs), name);
  if (!n) return p.error(fmt::format("node {}: {}", quoted_text(name), n.status().diagnostic().message));
  return Status::ok();
}

}  // namespace

std::string to_graph_text(const Graph& g) {
  std::string out;
  for (NodeId n : g.nodes()) {
    const OpKind op = g.op(n);
    const auto& args = g.args(n);
    const auto& kwargs = g.kwargs(n);
    if (op == OpKind::Output && g.name(n) == "output" && g.target(n) == "output" && args.size() == 1 &&
        kwargs.empty()) {
      out += "return " + format_argument(g, args.front()) + "\n";
      continue;
    }
    out += g.name(n) + " = " + std::string(op_kind_name(op));
    const bool default_target =
        (op == OpKind::Placeholder && g.target(n) == g.name(n)) || (op == OpKind::Output && g.target(n) == "output");
    if (!default_target) out += " " + g.target(n);
    const bool call = op == OpKind::CallFunction || op == OpKind::CallMethod || op == OpKind::CallModule;
    if (call || !args.empty() || !kwargs.empty()) {
      out += "(";
      bool first = true;
      for (const Argument& a : args) {
        if (!first) out += ", ";
        first = false;
        out += format_argument(g, a);
      }
      for (const auto& [key, value] : kwargs) {
        if (!first) out += ", ";
        first = false;
        out += key + "=" + format_argument(g, value);
      }
      out += ")";
    }
    out += "\n";
  }
  return out;
}

Result<Graph> parse_graph_text(std::string_view text, std::string_view source) {
  Graph g;
  int line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (Status s = parse_line(line, line_no, source, g); !s) return s;
  }
  return g;
}

}  // namespace graft
