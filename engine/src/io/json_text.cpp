// JSON string spelling as Python's json.dumps(ensure_ascii=True) writes it, so that files written
// by graft_fx and by graft are byte-identical.
#include "graft/io/json_text.hpp"

namespace graft::detail {

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

}  // namespace graft::detail
