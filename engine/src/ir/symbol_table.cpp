// Interned strings: an open-addressing table of symbols.
#include "graft/ir/symbol_table.hpp"

#include "ir/memory.hpp"

namespace graft {

namespace {
std::uint32_t symbol_hash(std::string_view text) {
  std::uint64_t h = std::hash<std::string_view>{}(text);
  return static_cast<std::uint32_t>(h ^ (h >> 32));
}
}  // namespace

std::size_t SymbolTable::slot_of(std::string_view text, std::uint32_t hash) const {
  std::size_t mask = buckets_.size() - 1;
  std::size_t i = hash & mask;
  while (buckets_[i].id != kMissing && (buckets_[i].hash != hash || texts_[buckets_[i].id] != text)) i = (i + 1) & mask;
  return i;
}

void SymbolTable::grow() {
  std::vector<Bucket> old = std::move(buckets_);
  std::size_t size = old.empty() ? 64 : old.size() * 2;
  buckets_ = {};
  buckets_.reserve(size);
  detail::advise_huge_pages(buckets_.data(), size * sizeof(Bucket));  // as NameIndex: lookups go anywhere
  buckets_.assign(size, Bucket{});
  std::size_t mask = buckets_.size() - 1;
  for (const Bucket& b : old) {
    if (b.id == kMissing) continue;
    std::size_t i = b.hash & mask;
    while (buckets_[i].id != kMissing) i = (i + 1) & mask;
    buckets_[i] = b;
  }
}

Symbol SymbolTable::intern(std::string_view text) {
  if ((texts_.size() + 1) * 2 > buckets_.size()) grow();
  std::uint32_t hash = symbol_hash(text);
  std::size_t i = slot_of(text, hash);
  if (buckets_[i].id != kMissing) return buckets_[i].id;
  Symbol id = static_cast<Symbol>(texts_.size());
  texts_.emplace_back(text);
  buckets_[i] = {hash, id};
  return id;
}

Symbol SymbolTable::find(std::string_view text) const {
  if (buckets_.empty()) return kMissing;
  return buckets_[slot_of(text, symbol_hash(text))].id;
}

}  // namespace graft
