// Argument equality and container access.
#include "graft/ir/argument.hpp"
#include "graft/ir/meta.hpp"

#include <cmath>

namespace graft {

const std::vector<Argument>* Argument::items() const {
  switch (kind()) {
    case ArgKind::List: return &std::get<List>(v_).items;
    case ArgKind::Tuple: return &std::get<Tuple>(v_).items;
    case ArgKind::Slice: return &std::get<Slice>(v_).parts;
    case ArgKind::Dict: return &std::get<Dict>(v_).items;
    default: return nullptr;
  }
}

std::vector<Argument>* Argument::items() {
  return const_cast<std::vector<Argument>*>(static_cast<const Argument*>(this)->items());
}

void Dict::add(Argument key, Argument value) {
  items.push_back(std::move(key));
  items.push_back(std::move(value));
}

bool operator==(const Argument& a, const Argument& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case ArgKind::None:
    case ArgKind::Ellipsis: return true;
    case ArgKind::Bool: return a.get<bool>() == b.get<bool>();
    case ArgKind::Int: return a.get<std::int64_t>() == b.get<std::int64_t>();
    case ArgKind::Float: {
      double x = a.get<double>(), y = b.get<double>();
      return x == y || (std::isnan(x) && std::isnan(y));
    }
    case ArgKind::String: return a.get<std::string>() == b.get<std::string>();
    case ArgKind::Node: return a.node_id() == b.node_id();
    case ArgKind::DType: return a.get<DType>().name == b.get<DType>().name;
    case ArgKind::Device: return a.get<Device>().name == b.get<Device>().name;
    case ArgKind::Layout: return a.get<Layout>().name == b.get<Layout>().name;
    case ArgKind::MemoryFormat: return a.get<MemoryFormat>().name == b.get<MemoryFormat>().name;
    case ArgKind::List:
    case ArgKind::Tuple:
    case ArgKind::Slice:
    case ArgKind::Dict: return *a.items() == *b.items();
  }
  return false;
}

const std::string* NodeMeta::find_extra(std::string_view key) const {
  for (const auto& [k, v] : extra)
    if (k == key) return &v;
  return nullptr;
}

const NodeMeta& SharedMeta::none() {
  static const NodeMeta empty{};
  return empty;
}

}  // namespace graft
