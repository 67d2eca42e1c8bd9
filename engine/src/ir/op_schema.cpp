// TorchScript schema parsing (the subset of c10's SchemaParser grammar torch prints), printing
// in torch's spelling, and the registry of torch's schemas.
#include "graft/ir/op_schema.hpp"
#include "ir/embedded_data.hpp"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace graft {

namespace {

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }
bool is_space(char c) { return c == ' ' || c == '\t'; }

// Types whose name is followed by a parenthesised list of types (`Dict(str, Tensor)`). After any
// other type name a `(` opens an alias annotation (`Tensor(a!)`), as in c10's SchemaTypeParser.
bool takes_type_arguments(std::string_view name) {
  return name == "Dict" || name == "Future" || name == "RRef" || name == "Union" || name == "Await" ||
      name == "Optional" || name == "Tuple";
}

struct ParseError {
  std::size_t column = 0;  // 1-based
  std::string message;
};

// Recursive descent over one schema. Each step returns false after recording the first error;
// no exceptions, so the error position is simply where the cursor stopped.
class SchemaParser {
 public:
  explicit SchemaParser(std::string_view text) : s_(text) {}

  bool parse(OpSchema& out) {
    skip_space();
    std::string_view ns, name;
    if (!identifier(ns, "an operator namespace such as 'aten'")) return false;
    if (!literal("::", "'::' after the namespace")) return false;
    if (!identifier(name, "an operator name after '::'")) return false;
    out.ns = ns;
    out.name = name;
    if (peek() == '.') {
      ++pos_;
      std::string_view overload;
      if (!identifier(overload, "an overload name after '.'")) return false;
      out.overload = overload;
    }
    skip_space();
    if (!literal("(", "'(' to open the argument list")) return false;
    if (!arguments(out)) return false;
    skip_space();
    if (!literal("->", "'->' before the returns")) return false;
    skip_space();
    if (!returns(out)) return false;
    skip_space();
    if (pos_ != s_.size()) return fail("end of schema after the returns");
    return true;
  }

  const ParseError& error() const { return error_; }

 private:
  char peek(std::size_t ahead = 0) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }
  bool at(std::string_view lit) const { return s_.substr(pos_).starts_with(lit); }
  void skip_space() {
    while (pos_ < s_.size() && is_space(s_[pos_])) ++pos_;
  }

  bool fail(std::string_view expected) { return fail_at(pos_, expected); }
  bool fail_at(std::size_t pos, std::string_view expected) {
    std::string found = pos >= s_.size() ? std::string("end of text") : "'" + std::string(1, s_[pos]) + "'";
    return error_at(pos, "expected " + std::string(expected) + ", found " + found);
  }
  bool error_at(std::size_t pos, std::string message) {
    error_ = {pos + 1, std::move(message)};
    return false;
  }

  bool literal(std::string_view lit, std::string_view expected) {
    if (!at(lit)) return fail(expected);
    pos_ += lit.size();
    return true;
  }

  bool identifier(std::string_view& out, std::string_view expected) {
    if (!is_ident_start(peek())) return fail(expected);
    std::size_t start = pos_;
    while (is_ident_char(peek())) ++pos_;
    out = s_.substr(start, pos_ - start);
    return true;
  }

  // After `(`: `Tensor self, *, Scalar alpha=1)`, `...)`, `)`.
  bool arguments(OpSchema& out) {
    skip_space();
    if (peek() == ')') {
      ++pos_;
      return true;
    }
    bool kwarg_only = false;
    for (;;) {
      skip_space();
      if (at("...")) {
        pos_ += 3;
        out.is_vararg = true;
        skip_space();
        return literal(")", "')' after '...' (it must be the last argument)");
      }
      if (peek() == '*') {
        if (kwarg_only) return fail("an argument (the '*' marker appears twice)");
        ++pos_;
        kwarg_only = true;
        skip_space();
        if (peek() != ',') return fail("',' and a keyword-only argument after '*'");
        ++pos_;
        continue;
      }
      SchemaArgument arg;
      arg.kwarg_only = kwarg_only;
      std::size_t name_pos = 0;
      if (!argument(arg, /*is_return=*/false, &name_pos)) return false;
      // Matching binds keyword arguments by name, so a name may appear once.
      for (const SchemaArgument& earlier : out.arguments) {
        if (earlier.name == arg.name) return error_at(name_pos, "duplicate argument name '" + arg.name + "'");
      }
      out.arguments.push_back(std::move(arg));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == ')') {
        ++pos_;
        return true;
      }
      return fail("',' or ')' after argument '" + out.arguments.back().name + "'");
    }
  }

  // `-> Tensor`, `-> Tensor[] self_out`, `-> (Tensor(a!) values, Tensor indices)`, `-> ()`,
  // `-> ((Tensor, t))` (one tuple-typed return: torch adds the parentheses so the `(` is not
  // taken for a return list).
  bool returns(OpSchema& out) {
    if (at("...")) {
      pos_ += 3;
      out.is_varret = true;
      return true;
    }
    if (peek() != '(') {
      SchemaArgument ret;
      if (!argument(ret, /*is_return=*/true)) return false;
      out.returns.push_back(std::move(ret));
      return true;
    }
    ++pos_;
    skip_space();
    if (peek() == ')') {
      ++pos_;
      return true;
    }
    for (;;) {
      skip_space();
      if (at("...")) {
        pos_ += 3;
        out.is_varret = true;
        skip_space();
        return literal(")", "')' after '...' (it must be the last return)");
      }
      SchemaArgument ret;
      if (!argument(ret, /*is_return=*/true)) return false;
      out.returns.push_back(std::move(ret));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == ')') {
        ++pos_;
        return true;
      }
      return fail("',' or ')' after a return");
    }
  }

  // `type name[=default]`; for a return, `type [name]`.
  bool argument(SchemaArgument& arg, bool is_return, std::size_t* name_pos = nullptr) {
    std::size_t start = pos_;
    if (!type()) return false;
    arg.type = s_.substr(start, pos_ - start);
    std::size_t type_end = pos_;
    skip_space();
    if (is_return) {
      if (is_ident_start(peek())) {
        if (pos_ == type_end) return fail("a space between a return's type and its name");
        std::string_view name;
        (void)identifier(name, "");
        arg.name = name;
      }
      return true;
    }
    if (!is_ident_start(peek())) return fail("an argument name after type '" + arg.type + "'");
    if (pos_ == type_end) return fail("a space between type '" + arg.type + "' and the argument name");
    if (name_pos) *name_pos = pos_;
    std::string_view name;
    (void)identifier(name, "");
    arg.name = name;
    skip_space();
    if (peek() == '=') {
      ++pos_;
      skip_space();
      std::size_t value_start = pos_;
      if (!default_value()) return false;
      arg.default_value = std::string(s_.substr(value_start, pos_ - value_start));
    }
    return true;
  }

  // A type as c10 prints it: a name (`Tensor`, `int`, `__torch__.torch.classes.rnn.CellParamsBase`),
  // a container with type arguments (`Dict(str, t)`) or a tuple (`(Tensor, t)`), then any of
  // `[]`, `[N]`, `?` and an alias annotation (`Tensor(a!)`, `Tensor(a)[]`, `t[](a!)`, `t(*)?`).
  bool type() {
    DepthGuard guard(depth_);
    if (depth_ > kMaxDepth) return fail("at most 32 levels of nested types");
    if (peek() == '(') {
      ++pos_;
      if (!type_list(')', "a tuple element type")) return false;
    } else if (is_ident_start(peek())) {
      std::string_view name;
      (void)identifier(name, "");
      while (peek() == '.' && is_ident_start(peek(1))) {
        ++pos_;
        (void)identifier(name, "");
      }
      if (takes_type_arguments(name) && peek() == '(') {
        ++pos_;
        if (!type_list(')', "a type argument of '" + std::string(name) + "'")) return false;
      }
    } else {
      return fail("a type");
    }
    for (;;) {
      char c = peek();
      if (c == '?') {
        ++pos_;
      } else if (c == '[') {
        ++pos_;
        while (is_digit(peek())) ++pos_;
        if (!literal("]", "']' or a list size after '['")) return false;
      } else if (c == '(') {
        ++pos_;
        if (!alias_annotation()) return false;
      } else {
        return true;
      }
    }
  }

  // After `(`: `T, T)` or `)`.
  bool type_list(char close, std::string_view what) {
    skip_space();
    if (peek() == close) {
      ++pos_;
      return true;
    }
    for (;;) {
      skip_space();
      if (!is_ident_start(peek()) && peek() != '(') return fail(what);
      if (!type()) return false;
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == close) {
        ++pos_;
        return true;
      }
      return fail(std::string("',' or '") + close + "' in a type list");
    }
  }

  // After `(`: `a!)`, `a)`, `b|a)`, `*)`, `a -> *)`.
  bool alias_annotation() {
    skip_space();
    if (!alias_set()) return false;
    skip_space();
    if (peek() == '!') ++pos_;
    skip_space();
    if (at("->")) {
      pos_ += 2;
      skip_space();
      if (!alias_set()) return false;
      skip_space();
    }
    return literal(")", "')' to close the alias annotation");
  }

  bool alias_set() {
    if (peek() == '*') {
      ++pos_;
      return true;
    }
    for (;;) {
      std::string_view name;
      if (!identifier(name, "an alias set name or '*' in the alias annotation")) return false;
      if (peek() != '|') return true;
      ++pos_;
    }
  }

  // `1`, `-1`, `1.`, `1e-05`, `None`, `True`, `"valid"`, `[]`, `[1, 1]`, `(1, 2)`.
  bool default_value() {
    DepthGuard guard(depth_);
    if (depth_ > kMaxDepth) return fail("at most 32 levels of nested lists");
    char c = peek();
    if (c == '"' || c == '\'') return string_literal();
    if (c == '[' || c == '(') {
      char close = c == '[' ? ']' : ')';
      ++pos_;
      skip_space();
      if (peek() == close) {
        ++pos_;
        return true;
      }
      for (;;) {
        skip_space();
        if (!default_value()) return false;
        skip_space();
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        if (peek() == close) {
          ++pos_;
          return true;
        }
        return fail(std::string("',' or '") + close + "' in a default list");
      }
    }
    return scalar_literal();
  }

  // A string in double or single quotes; backslash escapes the next character.
  bool string_literal() {
    std::size_t start = pos_;
    char quote = s_[pos_++];
    while (pos_ < s_.size() && s_[pos_] != quote) pos_ += s_[pos_] == '\\' ? 2 : 1;
    if (pos_ >= s_.size()) {
      pos_ = s_.size();
      return fail_at(s_.size(), "the closing quote of the string starting at column " + std::to_string(start + 1));
    }
    ++pos_;
    return true;
  }

  // A number (`-1`, `1.`, `.5`, `1.0000000000000001e-05`) or a word (`None`, `True`, `inf`,
  // `contiguous_format`), with an optional sign.
  bool scalar_literal() {
    std::size_t start = pos_;
    if (peek() == '-' || peek() == '+') ++pos_;
    if (is_ident_start(peek())) {
      std::string_view word;
      (void)identifier(word, "");
      return true;
    }
    std::size_t digits = 0;
    while (is_digit(peek())) ++pos_, ++digits;
    if (peek() == '.') {
      ++pos_;
      while (is_digit(peek())) ++pos_, ++digits;
    }
    if (digits == 0) return fail_at(start, "a default value (number, word, string or list)");
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '-' || peek() == '+') ++pos_;
      if (!is_digit(peek())) return fail("digits in the exponent");
      while (is_digit(peek())) ++pos_;
    }
    if (is_ident_char(peek())) return fail("',' or ')' after the number");
    return true;
  }

  // Types and default lists nest by recursion; the limit keeps a hostile line such as 100000
  // `(` from overflowing the stack (torch's deepest is 2).
  static constexpr int kMaxDepth = 32;
  struct DepthGuard {
    explicit DepthGuard(int& d) : depth(d) { ++depth; }
    ~DepthGuard() { --depth; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    int& depth;
  };

  std::string_view s_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  ParseError error_;
};

// Parses one schema; on failure `error` holds the column within `text` and the message.
bool parse_schema(std::string_view text, OpSchema& out, ParseError& error) {
  SchemaParser parser(text);
  if (!parser.parse(out)) {
    error = parser.error();
    return false;
  }
  out.text = text;
  return true;
}

void append_argument(std::string& out, const SchemaArgument& arg) {
  out += arg.type;
  if (!arg.name.empty()) {
    out += ' ';
    out += arg.name;
  }
  if (arg.default_value) {
    out += '=';
    out += *arg.default_value;
  }
}

std::string_view trim(std::string_view s, std::size_t* leading = nullptr) {
  std::size_t begin = 0;
  while (begin < s.size() && (is_space(s[begin]) || s[begin] == '\r')) ++begin;
  std::size_t end = s.size();
  while (end > begin && (is_space(s[end - 1]) || s[end - 1] == '\r')) --end;
  if (leading) *leading = begin;
  return s.substr(begin, end - begin);
}

constexpr std::string_view kTorchOps = "torch.ops.";

}  // namespace

bool SchemaArgument::is_tensor() const {
  std::string_view t = type;
  if (!t.starts_with("Tensor")) return false;
  t.remove_prefix(6);
  // Nothing more, or exactly one alias annotation: `Tensor(a!)` but not `Tensor(a)[]`.
  return t.empty() || (t.front() == '(' && t.find(')') == t.size() - 1);
}

bool SchemaArgument::is_mutable() const {
  // `!` appears in a schema type only inside an alias annotation, where it marks a write.
  return type.find('!') != std::string::npos;
}

std::string OpSchema::qualified_target() const {
  std::string out(kTorchOps);
  out += ns;
  out += '.';
  out += name;
  out += '.';
  out += overload.empty() ? std::string_view("default") : std::string_view(overload);
  return out;
}

const SchemaArgument* OpSchema::find_argument(std::string_view arg_name) const {
  for (const SchemaArgument& a : arguments) {
    if (a.name == arg_name) return &a;
  }
  return nullptr;
}

Result<OpSchema> parse_op_schema(std::string_view text) {
  std::size_t leading = 0;
  std::string_view body = trim(text, &leading);
  OpSchema schema;
  ParseError error;
  if (!parse_schema(body, schema, error)) {
    int column = static_cast<int>(error.column + leading);
    return Status::error(
        Diagnostic{.column = column, .message = "column " + std::to_string(column) + ": " + error.message});
  }
  return schema;
}

std::string to_string(const OpSchema& schema) {
  // Mirrors c10's operator<<(ostream&, const FunctionSchema&).
  std::string out = schema.ns + "::" + schema.name;
  if (!schema.overload.empty()) out += '.' + schema.overload;
  out += '(';
  bool seen_kwarg_only = false;
  for (std::size_t i = 0; i < schema.arguments.size(); ++i) {
    if (i > 0) out += ", ";
    if (schema.arguments[i].kwarg_only && !seen_kwarg_only) {
      out += "*, ";
      seen_kwarg_only = true;
    }
    append_argument(out, schema.arguments[i]);
  }
  if (schema.is_vararg) {
    if (!schema.arguments.empty()) out += ", ";
    out += "...";
  }
  out += ") -> ";
  const auto& rets = schema.returns;
  // No parentheses for exactly one return (or only `...`), unless that return's type itself
  // starts with `(` (a tuple or a list of tuples), which would read as a return list.
  bool parens = !((rets.size() == 1 && !schema.is_varret) || (rets.empty() && schema.is_varret));
  if (rets.size() == 1 && !parens) parens = rets.front().type.starts_with('(');
  if (parens) out += '(';
  for (std::size_t i = 0; i < rets.size(); ++i) {
    if (i > 0) out += ", ";
    append_argument(out, rets[i]);
  }
  if (schema.is_varret) {
    if (!rets.empty()) out += ", ";
    out += "...";
  }
  if (parens) out += ')';
  return out;
}

const OpSchemaRegistry& OpSchemaRegistry::builtin() {
  // A function-local static: initialised once, on first use, thread-safely (C++11 "magic
  // statics"); programs that never look a schema up never pay for the parse.
  static const OpSchemaRegistry registry = [] {
    OpSchemaRegistry r;
    for (const char* t : {"torch._assert", "torch._assert_async", "torch.ops.aten._assert_async.default",
                          "torch.ops.aten._assert_async.msg", "torch.ops.profiler._record_function_enter",
                          "torch.ops.profiler._record_function_exit"})
      r.add_side_effect(t);
    Status s = r.add_text(detail::builtin_schema_text(), "engine/data/aten_schemas.txt");
    std::string_view tags = detail::builtin_tags_text();  // `<tag> <ns>::<op>[.<overload>]` lines
    while (s && !tags.empty()) {
      const std::size_t end = std::min(tags.find('\n'), tags.size());
      const std::string_view line = tags.substr(0, end);
      tags.remove_prefix(std::min(end + 1, tags.size()));
      const std::size_t space = line.find(' ');
      if (line.empty() || line.front() == '#' || space == std::string_view::npos) continue;
      r.add_tag(line.substr(space + 1), line.substr(0, space));
    }
    if (!s) {
      // The file is generated by torch and checked by the tests: failing here is a build
      // defect, not an input error, so there is no caller that could handle it.
      std::fprintf(stderr, "graft: the embedded operator schemas do not parse: %s\n", s.message().c_str());
      std::abort();
    }
    return r;
  }();
  return registry;
}

Status OpSchemaRegistry::add_text(std::string_view text, std::string_view origin) {
  // Parse everything first and commit only when all lines are good, so a failed call leaves the
  // registry as it was.
  std::vector<OpSchema> parsed;
  std::vector<std::string> keys;
  std::unordered_map<std::string, int, StringHash, std::equal_to<>> first_line;
  int line_number = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    std::size_t leading = 0;
    std::string_view body = trim(line, &leading);
    if (body.empty() || body.front() == '#') continue;
    OpSchema schema;
    ParseError error;
    auto diag = [&](int column, std::string message) {
      return Status::error(Diagnostic{
          .file = std::string(origin), .line = line_number, .column = column, .message = std::move(message)});
    };
    if (!parse_schema(body, schema, error)) return diag(static_cast<int>(error.column + leading), error.message);
    std::string key = schema.qualified_target();
    std::string qualified = schema.ns + "::" + schema.name + (schema.overload.empty() ? "" : "." + schema.overload);
    if (by_target_.contains(key) || (base_ != nullptr && base_->find(key) != nullptr)) {
      return diag(static_cast<int>(leading + 1), "schema for '" + qualified + "' is already registered");
    }
    auto [it, inserted] = first_line.emplace(key, line_number);
    if (!inserted) {
      return diag(static_cast<int>(leading + 1),
                  "schema for '" + qualified + "' is already on line " + std::to_string(it->second));
    }
    keys.push_back(std::move(key));
    parsed.push_back(std::move(schema));
  }
  by_target_.reserve(by_target_.size() + parsed.size());
  for (std::size_t i = 0; i < parsed.size(); ++i) {
    by_op_[parsed[i].ns + "::" + parsed[i].name].push_back(schemas_.size());
    by_target_.emplace(std::move(keys[i]), schemas_.size());
    schemas_.push_back(std::move(parsed[i]));
  }
  return Status::ok();
}

bool OpSchema::is_mutable() const {
  for (const SchemaArgument& a : arguments)
    if (a.is_mutable()) return true;
  return false;
}

namespace {

/// The torch.fx spelling of an operator named in any spelling `OpSchemaRegistry::find` takes.
std::string fx_spelling(std::string_view target) {
  if (target.starts_with(kTorchOps)) return std::string(target);
  std::string key(kTorchOps);
  if (const std::size_t colons = target.find("::"); colons != std::string_view::npos) {
    const std::string_view rest = target.substr(colons + 2);
    key += target.substr(0, colons);
    key += '.';
    key += rest;
    if (rest.find('.') == std::string_view::npos) key += ".default";
    return key;
  }
  return key + std::string(target);
}

}  // namespace

void OpSchemaRegistry::add_tag(std::string_view target, std::string_view tag) {
  tags_.insert(fx_spelling(target) + " " + std::string(tag));
}

bool OpSchemaRegistry::has_tag(std::string_view target, std::string_view tag) const {
  const std::string key = fx_spelling(target) + " " + std::string(tag);
  return tags_.contains(key) || (base_ != nullptr && base_->has_tag(target, tag));
}

bool OpSchemaRegistry::has_side_effects(std::string_view target) const {
  if (side_effects_.contains(target) || (base_ != nullptr && base_->has_side_effects(target))) return true;
  if (!target.starts_with(kTorchOps) && target.find("::") == std::string_view::npos) return false;
  // Any spelling `find` takes; an overload packet (`torch.ops.npu.op`) when any overload has them.
  const std::string key = fx_spelling(target);
  if (key != target && side_effects_.contains(key)) return true;
  const std::string packet = std::string(target) + ".";
  auto it = side_effects_.lower_bound(packet);
  return it != side_effects_.end() && it->starts_with(packet) && it->find('.', packet.size()) == std::string::npos;
}

const OpSchema* OpSchemaRegistry::find(std::string_view target) const {
  if (const OpSchema* s = find_here(target)) return s;
  return base_ != nullptr ? base_->find(target) : nullptr;
}

std::vector<const OpSchema*> OpSchemaRegistry::overloads(std::string_view op_name) const {
  std::vector<const OpSchema*> out;
  if (auto it = by_op_.find(op_name); it != by_op_.end())
    for (std::size_t i : it->second) out.push_back(&schemas_[i]);
  if (base_ != nullptr)
    for (const OpSchema* s : base_->overloads(op_name)) out.push_back(s);
  return out;
}

const OpSchema* OpSchemaRegistry::find_here(std::string_view target) const {
  if (schemas_.empty()) return nullptr;
  auto lookup = [this](std::string_view key) -> const OpSchema* {
    auto it = by_target_.find(key);
    return it == by_target_.end() ? nullptr : &schemas_[it->second];
  };
  // The torch.fx spelling is the hot path: probed without building a string.
  if (target.starts_with(kTorchOps)) return lookup(target);
  return lookup(fx_spelling(target));  // aten::add.Tensor, aten::relu, aten.add.Tensor
}

}  // namespace graft
