// Canonical JSON spelling shared by the writer and the reader (docs/FORMAT.md §5); numbers are
// spelled by graft/ir/python_repr.hpp.
#pragma once

#include <string>
#include <string_view>

#include "graft/ir/python_repr.hpp"

namespace graft::detail {

/// Appends `s` (UTF-8) as a JSON string, escaped as Python's json.dumps(ensure_ascii=True).
void append_json_string(std::string& out, std::string_view s);

}  // namespace graft::detail
