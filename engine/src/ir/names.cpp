// Interned targets and FX's node naming rules.
#include <cctype>

#include "graft/ir/graph.hpp"
#include "graft/ir/memory.hpp"
#include "graft/ir/symbol_table.hpp"
#include "graft/ir/target_name.hpp"

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

bool parse_op_overload(std::string_view target, OpOverloadName& out) {
  constexpr std::string_view kOps = "torch.ops.";
  if (target.substr(0, kOps.size()) != kOps) return false;
  std::string_view rest = target.substr(kOps.size());
  std::size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  out.ns = rest.substr(0, dot);
  rest = rest.substr(dot + 1);
  dot = rest.find('.');
  out.op = rest.substr(0, dot);
  out.overload = dot == std::string_view::npos ? std::string_view{} : rest.substr(dot + 1);
  return !out.op.empty();
}

namespace {

// FX names must be Python identifiers: other characters become '_', a leading digit gets '_'.
std::string sanitize(std::string_view hint) {
  std::string s;
  s.reserve(hint.size() + 1);
  for (char c : hint) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (s.empty()) s = "_unnamed";
  if (std::isdigit(static_cast<unsigned char>(s[0]))) s.insert(s.begin(), '_');
  return s;
}

// Splits `relu_12` into (`relu`, 12); names without a numeric suffix give (name, 0).
std::pair<std::string, std::uint32_t> split_suffix(const std::string& name) {
  std::size_t us = name.rfind('_');
  if (us == std::string::npos || us == 0 || us + 1 == name.size()) return {name, 0};
  std::uint64_t value = 0;
  for (std::size_t i = us + 1; i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return {name, 0};
    value = value * 10 + static_cast<std::uint64_t>(name[i] - '0');
    if (value > 0xffffffu) return {name, 0};
  }
  if (name[us + 1] == '0' && name.size() > us + 2) return {name, 0};  // `x_01` is a plain name
  return {name.substr(0, us), static_cast<std::uint32_t>(value)};
}

}  // namespace

std::string Graph::unique_name(std::string_view hint) {
  std::string candidate = sanitize(hint);
  auto used = [&](const std::string& name) { return name_taken(name) || retired_names_.contains(name); };
  if (!used(candidate)) return candidate;
  auto [base, number] = split_suffix(candidate);
  std::uint32_t& counter = name_counters_[base];
  if (counter < number) counter = number;
  for (;;) {
    std::string name = base + '_' + std::to_string(++counter);
    if (!used(name)) return name;
  }
}

}  // namespace graft
