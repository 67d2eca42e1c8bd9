// The data files compiled into the library by engine/cmake/embed_text.cmake (engine/data/; the
// tests compare each with what the installed torch gives).
#pragma once

#include <string_view>

namespace graft::detail {

/// The bytes of engine/data/aten_schemas.txt (op_schema.cpp).
std::string_view builtin_schema_text();

/// The bytes of engine/data/aten_tags.txt (op_schema.cpp).
std::string_view builtin_tags_text();

/// The bytes of engine/data/fx_target_names.txt (target_name.cpp).
std::string_view fx_target_names_text();

}  // namespace graft::detail
