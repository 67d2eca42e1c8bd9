// Interned strings for node targets: many nodes share few targets, and the matcher
// compares targets by id.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace graft {

using Symbol = std::uint32_t;

/// Hash for string-keyed maps that can be probed with a string_view without allocating.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

class SymbolTable {
 public:
  /// The id of `text`, adding it on first use.
  Symbol intern(std::string_view text);
  /// The id of `text` if it was interned, else `kMissing`.
  Symbol find(std::string_view text) const;
  const std::string& text(Symbol s) const { return texts_[s]; }
  std::size_t size() const { return texts_.size(); }

  static constexpr Symbol kMissing = 0xffffffffu;

 private:
  std::deque<std::string> texts_;  // deque: references stay valid as it grows
  std::unordered_map<std::string, Symbol, StringHash, std::equal_to<>> ids_;
};

}  // namespace graft
