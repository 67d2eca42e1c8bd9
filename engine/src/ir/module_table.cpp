// ModuleTable: lookups by qualified path.
#include "graft/ir/module_table.hpp"

#include <limits>
#include <set>

#include <simdjson.h>

#include "graft/ir/graph.hpp"

namespace graft {

ModuleInfo::ModuleInfo(const ModuleInfo& other)
    : path(other.path),
      class_name(other.class_name),
      parameters(other.parameters),
      buffers(other.buffers),
      attributes_json(other.attributes_json),
      origin(other.origin),
      opaque(other.opaque),
      graph(other.graph ? std::make_unique<Graph>(*other.graph) : nullptr) {}

ModuleInfo& ModuleInfo::operator=(const ModuleInfo& other) {
  if (this != &other) *this = ModuleInfo(other);
  return *this;
}

ModuleInfo::~ModuleInfo() = default;

Status ModuleTable::add(ModuleInfo info) {
  NodeId i = static_cast<NodeId>(entries_.size());
  entries_.push_back(std::move(info));
  if (!index_.insert_unique(entries_.back().path, i, path_of())) {
    std::string path = std::move(entries_.back().path);
    entries_.pop_back();
    return Status::error("duplicate module path " + quoted_text(path));
  }
  return Status::ok();
}

void ModuleTable::remove_if(const std::function<bool(const ModuleInfo&)>& drop) {
  std::vector<ModuleInfo> kept;
  kept.reserve(entries_.size());
  for (ModuleInfo& m : entries_)
    if (m.path.empty() || !drop(m)) kept.push_back(std::move(m));
  entries_.clear();
  index_ = detail::NameIndex{};
  for (ModuleInfo& m : kept) (void)add(std::move(m));  // paths were unique already
}

void ModuleTable::reserve(std::size_t count) {
  entries_.reserve(entries_.size() + count);
  index_.reserve(index_.size() + count);
}

const ModuleInfo* ModuleTable::find(std::string_view path) const {
  NodeId i = index_.find(path, path_of());
  return i == kNoNode ? nullptr : &entries_[i];
}

ModuleInfo* ModuleTable::find(std::string_view path) {
  return const_cast<ModuleInfo*>(static_cast<const ModuleTable*>(this)->find(path));
}

const TensorSpec* ModuleTable::find_tensor(std::string_view qualified) const {
  // `a.b.weight` is tensor `weight` of module `a.b`; a root tensor has no dot.
  std::size_t dot = qualified.rfind('.');
  std::string_view owner = dot == std::string_view::npos ? std::string_view{} : qualified.substr(0, dot);
  std::string_view name = dot == std::string_view::npos ? qualified : qualified.substr(dot + 1);
  const ModuleInfo* m = find(owner);
  if (!m) return nullptr;
  for (const TensorSpec& t : m->parameters)
    if (t.name == name) return &t;
  for (const TensorSpec& t : m->buffers)
    if (t.name == name) return &t;
  return nullptr;
}

bool ModuleTable::has_attribute(std::string_view qualified) const {
  return find(qualified) != nullptr || find_tensor(qualified) != nullptr;
}

std::string qualify(std::string_view prefix, std::string_view name) {
  return prefix.empty() ? std::string(name) : std::string(prefix) + "." + std::string(name);
}

ModuleTable ModuleTable::subtable(std::string_view prefix) const {
  ModuleTable out;
  for (const ModuleInfo& m : entries_) {
    const bool at = m.path == prefix;
    const bool under = prefix.empty() ||
        (m.path.size() > prefix.size() && m.path.compare(0, prefix.size(), prefix) == 0 &&
         m.path[prefix.size()] == '.');
    if (!at && !under) continue;
    ModuleInfo copy(m);
    copy.path = at ? std::string() : (prefix.empty() ? m.path : m.path.substr(prefix.size() + 1));
    (void)out.add(std::move(copy));  // paths stay distinct: a prefix stripped from distinct paths
  }
  return out;
}

bool ModuleTable::has_setting(std::string_view qualified) const {
  const std::size_t dot = qualified.rfind('.');
  const ModuleInfo* owner = find(dot == std::string_view::npos ? std::string_view() : qualified.substr(0, dot));
  if (owner == nullptr || owner->attributes_json.empty()) return false;
  const std::string_view name = dot == std::string_view::npos ? qualified : qualified.substr(dot + 1);
  simdjson::dom::parser parser;
  simdjson::dom::object settings;
  if (parser.parse(owner->attributes_json).get(settings) != simdjson::SUCCESS) return false;
  simdjson::dom::element value;
  return settings.at_key(name).get(value) == simdjson::SUCCESS;
}

std::int64_t ModuleTable::parameter_count() const {
  std::int64_t total = 0;
  std::set<std::string> shared;  // calls of one module share its parameters: counted once
  for (const ModuleInfo& m : entries_) {
    for (const TensorSpec& p : m.parameters) {
      if (!m.origin.empty() && !shared.insert(m.origin + "." + p.name).second) continue;
      bool empty = false;  // a zero or symbolic dim: nothing to count, whatever the other dims
      for (const Dim& d : p.shape) empty = empty || d.is_symbolic() || d.value() == 0;
      if (empty) continue;
      std::int64_t n = 1;
      for (const Dim& d : p.shape)
        if (__builtin_mul_overflow(n, d.is_symbolic() ? 0 : d.value(), &n))
          return std::numeric_limits<std::int64_t>::max();
      if (__builtin_add_overflow(total, n, &total)) return std::numeric_limits<std::int64_t>::max();
    }
  }
  return total;
}

}  // namespace graft
