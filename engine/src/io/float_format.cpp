// Canonical number and string spelling: Python's repr(float) and json.dumps(ensure_ascii=True),
// so that files written by graft_fx and by graft are byte-identical.
#include <charconv>
#include <system_error>

#include <simdjson.h>

#include "graft/io/json_text.hpp"

namespace graft::detail {

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

namespace {

void append_u_escape(std::string& out, unsigned code) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(code >> shift) & 0xfu];
}

// Decodes one UTF-8 sequence at s[i]; input was validated by the parser, but stay safe on
// bad bytes by passing them through as U+FFFD.
unsigned decode_utf8(std::string_view s, std::size_t& i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  int extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
  unsigned code = extra == 3 ? (c & 0x07u) : extra == 2 ? (c & 0x0fu) : extra == 1 ? (c & 0x1fu) : 0xfffdu;
  for (int k = 0; k < extra; ++k) {
    if (i + 1 >= s.size()) return 0xfffd;
    code = (code << 6) | (static_cast<unsigned char>(s[++i]) & 0x3fu);
  }
  return code;
}

}  // namespace

bool valid_utf8(std::string_view s) { return simdjson::validate_utf8(s.data(), s.size()); }

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (std::size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else if (c < 0x80) {
      append_u_escape(out, c);
    } else {
      unsigned code = decode_utf8(s, i);
      if (code >= 0x10000) {
        code -= 0x10000;
        append_u_escape(out, 0xd800 + (code >> 10));
        append_u_escape(out, 0xdc00 + (code & 0x3ff));
      } else {
        append_u_escape(out, code);
      }
    }
  }
  out += '"';
}

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

}  // namespace graft::detail
