// NameIndex: linear probing with backward-shift deletion (no tombstones to clean up).
#include "graft/ir/detail/name_index.hpp"

#include <algorithm>

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

bool NameLog::contains(std::string_view name) {
  if (std::find(found_.begin(), found_.end(), name) != found_.end()) return true;
  for (; indexed_ < ends_.size(); ++indexed_)
    (void)index_.insert_unique(this->name(indexed_), static_cast<NodeId>(indexed_), name_of());
  if (index_.find(name, name_of()) == kNoNode) return false;
  if (found_.size() == 16) found_.erase(found_.begin());
  found_.emplace_back(name);
  return true;
}

void NameLog::truncate(std::size_t count) {
  found_.clear();  // a forgotten name may be among them
  while (ends_.size() > count) {
    const std::size_t last = ends_.size() - 1;
    if (last < indexed_) index_.erase(name(last), static_cast<NodeId>(last));
    text_.resize(last == 0 ? 0 : ends_[last - 1]);
    ends_.pop_back();
  }
  indexed_ = std::min(indexed_, count);
}

std::pair<std::string_view, std::uint32_t> split_suffix(std::string_view name) {
  std::size_t us = name.rfind('_');
  if (us == std::string_view::npos || us == 0 || us + 1 == name.size()) return {name, 0};
  std::uint64_t value = 0;
  for (std::size_t i = us + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return {name, 0};
    value = value * 10 + static_cast<std::uint64_t>(name[i] - '0');
    if (value > 0xffffffu) return {name, 0};
  }
  if (name[us + 1] == '0' && name.size() > us + 2) return {name, 0};  // `x_01` is a plain name
  return {name.substr(0, us), static_cast<std::uint32_t>(value)};
}

void SuffixCeiling::note(std::string_view name) {
  if (!active_) return;
  auto [base, number] = split_suffix(name);
  if (number == 0) return;
  auto it = top_.find(base);
  if (it == top_.end()) top_.emplace(std::string(base), number);
  else if (it->second < number) it->second = number;
}

bool SuffixCeiling::above(std::string_view base, std::uint32_t n) const {
  if (n > 0xffffffu) return false;  // not split as a suffix: noted under another base
  auto it = top_.find(base);
  return it == top_.end() || n > it->second;
}

}  // namespace graft::detail
