// The process-wide string registry behind InternedString.
#include "graft/ir/interned.hpp"

#include <deque>
#include <mutex>
#include <unordered_map>

#include "graft/ir/symbol_table.hpp"

namespace graft {

namespace {

struct Registry {
  std::mutex mutex;
  std::deque<std::string> texts;  // deque: pointers stay valid as it grows
  std::unordered_map<std::string_view, std::uint32_t> ids;

  const std::string* intern(std::string_view text) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = ids.find(text);
    if (it != ids.end()) return &texts[it->second];
    texts.emplace_back(text);
    ids.emplace(texts.back(), static_cast<std::uint32_t>(texts.size() - 1));
    return &texts.back();
  }
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: interned strings outlive static destructors
  return *r;
}

}  // namespace

// Every NodeData starts with empty dtype/device strings: take the lock once, not per node.
InternedString::InternedString() {
  static const std::string* const empty = registry().intern({});
  p_ = empty;
}
InternedString::InternedString(std::string_view text) : p_(registry().intern(text)) {}

std::uint32_t InternedString::id() const {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.ids.at(*p_);
}

InternedString InternedString::from_id(std::uint32_t id) {
  InternedString s;  // constructed before taking the lock: the constructor takes it too
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  s.p_ = &r.texts.at(id);
  return s;
}

}  // namespace graft
