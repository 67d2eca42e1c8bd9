// ModuleTable: lookups by qualified path.
#include "graft/ir/module_table.hpp"

#include <limits>
#include <set>

#include <simdjson.h>

#include "graft/ir/graph.hpp"

namespace graft {

Status ModuleTable::add(ModuleInfo info) {
  NodeId i = static_cast<NodeId>(entries_.size());
  entries_.push_back(std::move(info));
  if (!index_.insert_unique(entries_.back().path, i, path_of())) {
    std::string path = std::move(entries_.back().path);
    entries_.pop_back();
    return Status::error("duplicate module path " + quoted_text(path));
  }
  if (in_transaction()) {
    journal_.records.push_back({.kind = UndoRecord::Kind::Added, .position = i});
    journal_.last_record.push_back(kNoRecord);
  }
  return Status::ok();
}

ModuleInfo* ModuleTable::edit(std::string_view path, bool* saved) {
  const NodeId i = index_.find(path, path_of());
  if (saved != nullptr) *saved = false;
  if (i == kNoNode) return nullptr;
  // Saved once per transaction: a record inside the innermost one already holds the entry as
  // it was when that transaction began.
  if (in_transaction() && (journal_.last_record[i] == kNoRecord || journal_.last_record[i] < journal_.marks.back())) {
    journal_.records.push_back({.kind = UndoRecord::Kind::Edited,
                                .position = i,
                                .saved = entries_[i],
                                .previous_record = journal_.last_record[i]});
    journal_.last_record[i] = journal_.records.size() - 1;
    if (saved != nullptr) *saved = true;
  }
  return &entries_[i];
}

void ModuleTable::forget_last_save() {
  if (!in_transaction() || journal_.records.size() <= journal_.marks.back()) return;
  const UndoRecord& record = journal_.records.back();
  if (record.kind != UndoRecord::Kind::Edited) return;
  journal_.last_record[record.position] = record.previous_record;
  journal_.records.pop_back();
}

void ModuleTable::remove_if(const std::function<bool(const ModuleInfo&)>& drop) {
  std::vector<ModuleInfo> kept;
  std::vector<std::size_t> kept_records;
  kept.reserve(entries_.size());
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    ModuleInfo& m = entries_[i];
    if (m.path.empty() || !drop(m)) {
      kept.push_back(std::move(m));
      if (in_transaction()) kept_records.push_back(journal_.last_record[i]);
    } else if (in_transaction()) {
      // Positions as if removed one at a time, so that undoing in reverse reinserts each right.
      journal_.records.push_back({.kind = UndoRecord::Kind::Removed,
                                  .position = kept.size(),
                                  .saved = std::move(m),
                                  .previous_record = journal_.last_record[i]});
    }
  }
  entries_ = std::move(kept);
  if (in_transaction()) journal_.last_record = std::move(kept_records);
  rebuild_index();
}

void ModuleTable::rebuild_index() {
  index_ = detail::NameIndex{};
  index_.reserve(entries_.size());
  for (std::size_t i = 0; i < entries_.size(); ++i) index_.insert(entries_[i].path, static_cast<NodeId>(i));
}

void ModuleTable::begin_nested_transaction() {
  if (!in_transaction()) journal_.last_record.assign(entries_.size(), kNoRecord);
  journal_.marks.push_back(journal_.records.size());
}

void ModuleTable::commit_transaction() {
  if (!in_transaction()) return;
  journal_.marks.pop_back();
  if (!in_transaction()) journal_ = Journal();  // no rollback can come any more
}

void ModuleTable::rollback_transaction() {
  if (!in_transaction()) return;
  const std::size_t mark = journal_.marks.back();
  journal_.marks.pop_back();
  if (journal_.records.size() == mark) {  // nothing changed: no index to rebuild (g:scope, a clean pass)
    if (!in_transaction()) journal_ = Journal();
    return;
  }
  std::vector<std::size_t>& last = journal_.last_record;
  for (std::size_t r = journal_.records.size(); r-- > mark;) {
    UndoRecord& record = journal_.records[r];
    switch (record.kind) {
      case UndoRecord::Kind::Added:
        entries_.pop_back();
        last.pop_back();
        break;
      case UndoRecord::Kind::Edited:
        entries_[record.position] = std::move(record.saved);
        last[record.position] = record.previous_record;
        break;
      case UndoRecord::Kind::Removed:
        entries_.insert(entries_.begin() + static_cast<std::ptrdiff_t>(record.position), std::move(record.saved));
        last.insert(last.begin() + static_cast<std::ptrdiff_t>(record.position), record.previous_record);
        break;
    }
  }
  journal_.records.resize(mark);
  if (!in_transaction()) journal_ = Journal();
  rebuild_index();
}

void ModuleTable::reserve(std::size_t count) {
  entries_.reserve(entries_.size() + count);
  index_.reserve(index_.size() + count);
}

const ModuleInfo* ModuleTable::find(std::string_view path) const {
  NodeId i = index_.find(path, path_of());
  return i == kNoNode ? nullptr : &entries_[i];
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
