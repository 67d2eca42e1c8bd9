// Diagnostic printing and the FX spelling of op kinds.
#include "graft/status.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

#include "graft/ir/ids.hpp"

namespace graft {

namespace {

/// The length of the UTF-8 sequence at `s[i]` and its code point; 0 when it is not one.
std::size_t utf8_at(std::string_view s, std::size_t i, char32_t& cp) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = byte(i);
  std::size_t n = 0;
  if (b >= 0xc2 && b <= 0xdf) n = 2, cp = b & 0x1fU;
  else if (b >= 0xe0 && b <= 0xef) n = 3, cp = b & 0x0fU;
  else if (b >= 0xf0 && b <= 0xf4) n = 4, cp = b & 0x07U;
  else return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0U) != 0x80U) return 0;
    cp = (cp << 6U) | (byte(i + k) & 0x3fU);
  }
  const bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

/// C1 controls, bidirectional-text marks, embeddings, overrides and isolates, line and
/// paragraph separators: invisible, and able to reorder or break a line.
bool hidden_code_point(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x61c || cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
      (cp >= 0x2066 && cp <= 0x2069);
}

std::string escape(std::string_view text, bool keep_lines) {
  const auto plain = [](char c) { return c >= 0x20 && c < 0x7f; };
  if (std::all_of(text.begin(), text.end(), plain)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  char buf[12];
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (plain(c) || (keep_lines && (c == '\n' || c == '\t'))) {
      out += c;
      ++i;
      continue;
    }
    if (c == '\n' || c == '\r' || c == '\t') {
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t";
      ++i;
      continue;
    }
    char32_t cp = 0;
    const std::size_t n = static_cast<unsigned char>(c) >= 0x80 ? utf8_at(text, i, cp) : 0;
    if (n == 0) {  // another control character, DEL, or a byte that is not UTF-8
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
      ++i;
      continue;
    }
    if (hidden_code_point(cp)) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
      out += buf;
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace

std::string escape_text(std::string_view text) { return escape(text, false); }
std::string escape_message(std::string_view text) { return escape(text, true); }
std::string quoted_text(std::string_view text) { return "'" + escape(text, false) + "'"; }

std::string Diagnostic::to_string() const {
  std::string out;
  if (!file.empty()) {
    out += escape_text(file);
    if (line > 0) {
      out += ':' + std::to_string(line);
      if (column > 0) out += ':' + std::to_string(column);
    }
    out += ": ";
  }
  if (!path.empty()) out += escape_text(path) + ": ";
  if (!node.empty()) out += "node " + quoted_text(node) + ": ";
  out += escape_message(message);
  return out;
}

namespace {
constexpr std::array<std::string_view, 6> kOpNames = {"placeholder", "get_attr",    "call_function",
                                                      "call_method", "call_module", "output"};
}

std::string_view op_kind_name(OpKind op) { return kOpNames[static_cast<std::size_t>(op)]; }

bool parse_op_kind(std::string_view text, OpKind& out) {
  for (std::size_t i = 0; i < kOpNames.size(); ++i) {
    if (kOpNames[i] == text) {
      out = static_cast<OpKind>(i);
      return true;
    }
  }
  return false;
}

}  // namespace graft
