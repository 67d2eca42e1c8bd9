// The fields of the graph file's objects (docs/FORMAT.md), defined once: their keys, whether
// each is required, and the order files write them in. The C++ reader takes its key sets from
// here and the writer's spellings are checked against them at compile time; the Python module
// reads and writes module tables by these keys; graft_fx's reader and writer use
// graft_fx/format_fields.py, generated from this file by tools/gen_format_fields.py (a test
// fails when the two disagree). A new field starts here.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace graft::format {

struct Field {
  std::string_view key;
  bool required;
};

template <std::size_t N>
constexpr std::array<std::string_view, N> keys_of(const std::array<Field, N>& fields) {
  std::array<std::string_view, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = fields[i].key;
  return out;
}

/// The document: `{"format", "version", "meta", "modules", "nodes"}`.
enum class DocumentField : std::size_t { Format, Version, Meta, Modules, Nodes };
inline constexpr std::array<Field, 5> kDocumentFields{{
    {"format", true},
    {"version", true},
    {"meta", true},
    {"modules", true},
    {"nodes", true},
}};

/// A node of a graph.
enum class NodeField : std::size_t { Name, Op, Target, Args, Kwargs, Meta };
inline constexpr std::array<Field, 6> kNodeFields{{
    {"name", true},
    {"op", true},
    {"target", true},
    {"args", true},
    {"kwargs", true},
    {"meta", true},
}};

/// A tensor's description in node meta (`tensor_meta`).
enum class TensorMetaField : std::size_t { Shape, Dtype, Stride, Device };
inline constexpr std::array<Field, 4> kTensorMetaFields{{
    {"shape", true},
    {"dtype", true},
    {"stride", true},
    {"device", true},
}};

/// A module's parameter or buffer.
enum class TensorSpecField : std::size_t { Name, Shape, Dtype, Data, Stride, Device };
inline constexpr std::array<Field, 6> kTensorSpecFields{{
    {"name", true},
    {"shape", true},
    {"dtype", true},
    {"data", false},
    {"stride", false},
    {"device", false},
}};

/// A module of the module table.
enum class ModuleField : std::size_t { Path, Class, Parameters, Buffers, Attributes, Origin, Opaque, Graph };
inline constexpr std::array<Field, 8> kModuleFields{{
    {"path", true},
    {"class", true},
    {"parameters", true},
    {"buffers", true},
    {"attributes", false},
    {"origin", false},
    {"opaque", false},
    {"graph", false},
}};

/// A module's own graph.
enum class ModuleGraphField : std::size_t { Nodes };
inline constexpr std::array<Field, 1> kModuleGraphFields{{
    {"nodes", true},
}};

/// The keys alone, in the same order (what the reader's key sets hold).
inline constexpr auto kDocumentKeys = keys_of(kDocumentFields);
inline constexpr auto kNodeKeys = keys_of(kNodeFields);
inline constexpr auto kTensorMetaKeys = keys_of(kTensorMetaFields);
inline constexpr auto kTensorSpecKeys = keys_of(kTensorSpecFields);
inline constexpr auto kModuleKeys = keys_of(kModuleFields);
inline constexpr auto kModuleGraphKeys = keys_of(kModuleGraphFields);

/// The position of field `f` in its table.
template <class E>
constexpr std::size_t at(E f) {
  return static_cast<std::size_t>(f);
}

/// The key of field `f` of `fields`.
template <std::size_t N, class E>
constexpr std::string_view key(const std::array<Field, N>& fields, E f) {
  return fields[at(f)].key;
}

}  // namespace graft::format
