// Canonical JSON spelling shared by the writer and the reader (docs/FORMAT.md §5).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace graft::detail {

/// Appends `s` (UTF-8) as a JSON string, escaped as Python's json.dumps(ensure_ascii=True).
void append_json_string(std::string& out, std::string_view s);
/// Appends a finite double as Python's repr(float) spells it (`1.0`, `1e-05`, `1e+16`).
void append_python_float(std::string& out, double v);
void append_int(std::string& out, std::int64_t v);
/// Whether `s` is well-formed UTF-8 (no overlong forms, no surrogates), as graph files must be:
/// the writer would have to change a string that is not.
bool valid_utf8(std::string_view s);
/// Appends Python's repr of a str, for reading: quotes, backslash escapes, and \xNN for control
/// characters and for bytes outside a UTF-8 sequence (a string may hold any bytes).
void append_python_str(std::string& out, std::string_view s);

}  // namespace graft::detail
