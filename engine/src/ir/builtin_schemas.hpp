// The operator schemas compiled into the library (op_schema.cpp; op_schema_test compares them
// with the installed torch).
#pragma once

#include <string_view>

namespace graft {

namespace detail {
/// The bytes of engine/data/aten_schemas.txt, compiled into the library by
/// engine/cmake/embed_text.cmake.
std::string_view builtin_schema_text();
}  // namespace detail

}  // namespace graft
