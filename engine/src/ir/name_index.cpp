// NameIndex: linear probing with backward-shift deletion (no tombstones to clean up).
#include "graft/ir/detail/name_index.hpp"

#include "ir/memory.hpp"

namespace graft::detail {

NodeId NameIndex::find(std::string_view name, const NameOf& name_of) const {
  if (buckets_.empty()) return kNoNode;
  std::uint32_t h = hash_of(name);
  std::size_t mask = buckets_.size() - 1;
  for (std::size_t i = h & mask;; i = (i + 1) & mask) {
    const Bucket& b = buckets_[i];
    if (b.id == kNoNode) return kNoNode;
    if (b.hash == h && name_of(b.id) == name) return b.id;
  }
}

void NameIndex::insert(std::string_view name, NodeId id) {
  if ((size_ + 1) * 2 > buckets_.size()) rehash(buckets_.empty() ? 16 : buckets_.size() * 2);
  std::uint32_t h = hash_of(name);
  std::size_t mask = buckets_.size() - 1;
  std::size_t i = h & mask;
  while (buckets_[i].id != kNoNode) i = (i + 1) & mask;
  buckets_[i] = {h, id};
  ++size_;
}

bool NameIndex::insert_unique(std::string_view name, NodeId id, const NameOf& name_of) {
  if ((size_ + 1) * 2 > buckets_.size()) rehash(buckets_.empty() ? 16 : buckets_.size() * 2);
  std::uint32_t h = hash_of(name);
  std::size_t mask = buckets_.size() - 1;
  std::size_t i = h & mask;
  for (; buckets_[i].id != kNoNode; i = (i + 1) & mask)
    if (buckets_[i].hash == h && name_of(buckets_[i].id) == name) return false;
  buckets_[i] = {h, id};
  ++size_;
  return true;
}

void NameIndex::erase(std::string_view name, NodeId id) {
  if (buckets_.empty()) return;
  std::size_t mask = buckets_.size() - 1;
  std::size_t i = hash_of(name) & mask;
  while (buckets_[i].id != id) {
    if (buckets_[i].id == kNoNode) return;
    i = (i + 1) & mask;
  }
  // Shift later entries of the probe run back so lookups never stop at a hole too early.
  for (std::size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
    if (buckets_[j].id == kNoNode) break;
    std::size_t home = buckets_[j].hash & mask;
    bool movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
    if (movable) {
      buckets_[i] = buckets_[j];
      i = j;
    }
  }
  buckets_[i] = Bucket{};
  --size_;
}

void NameIndex::reserve(std::size_t count) {
  std::size_t want = 16;
  while (want < count * 2) want *= 2;
  if (want > buckets_.size()) rehash(want);
}

void NameIndex::rehash(std::size_t buckets) {
  std::vector<Bucket> old = std::move(buckets_);
  // Lookups land anywhere in the table: on huge pages a million-name table costs a handful of
  // TLB entries instead of thousands (a TLB miss costs hundreds of ns on virtual machines).
  buckets_ = {};
  buckets_.reserve(buckets);
  advise_huge_pages(buckets_.data(), buckets * sizeof(Bucket));
  buckets_.assign(buckets, Bucket{});
  std::size_t mask = buckets - 1;
  for (const Bucket& b : old) {
    if (b.id == kNoNode) continue;
    std::size_t i = b.hash & mask;
    while (buckets_[i].id != kNoNode) i = (i + 1) & mask;
    buckets_[i] = b;
  }
}

bool NameLog::insert(std::string name) {
  auto id = static_cast<NodeId>(names_.size());
  names_.push_back(std::move(name));
  if (index_.insert_unique(names_.back(), id, name_of())) return true;
  names_.pop_back();
  return false;
}

void NameLog::truncate(std::size_t count) {
  while (names_.size() > count) {
    index_.erase(names_.back(), static_cast<NodeId>(names_.size() - 1));
    names_.pop_back();
  }
}

}  // namespace graft::detail
