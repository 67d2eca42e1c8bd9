// Interned strings for node targets: many nodes share few targets, and the matcher
// compares targets by id.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

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
  struct Bucket {
    std::uint32_t hash = 0;
    Symbol id = kMissing;  // kMissing = empty
  };
  /// The bucket holding `text`, or the empty one where it would go.
  std::size_t slot_of(std::string_view text, std::uint32_t hash) const;
  void grow();

  std::deque<std::string> texts_;  // deque: references stay valid as it grows
  // Open addressing over ids, compared through texts_: one copy of each text, no node per
  // entry (a graph can have a million distinct get_attr targets), and a copy stays valid.
  std::vector<Bucket> buckets_;  // power-of-two size, linear probing, at most half full
};

}  // namespace graft
