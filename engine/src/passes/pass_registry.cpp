#include "graft/passes/pass_registry.hpp"

#include <algorithm>

namespace graft {

// Each pass declares itself in its own file; this is the one list of them (docs and messages
// list them in this order).
extern const PassInfo kDeadCodeEliminationPass;
extern const PassInfo kCommonSubexpressionEliminationPass;
extern const PassInfo kStableTopologicalSortPass;
extern const PassInfo kNormalizeArgsPass;
extern const PassInfo kFunctionalizePass;
extern const PassInfo kReinplacePass;
extern const PassInfo kSpecializePass;
extern const PassInfo kRemoveAssertsPass;
extern const PassInfo kLintPass;

namespace {

const PassInfo* const kPasses[] = {
    &kDeadCodeEliminationPass,
    &kCommonSubexpressionEliminationPass,
    &kStableTopologicalSortPass,
    &kNormalizeArgsPass,
    &kFunctionalizePass,
    &kReinplacePass,
    &kSpecializePass,
    &kRemoveAssertsPass,
    &kLintPass,
};

std::string choices_text(const PassOption& option) {
  std::string out;
  for (std::size_t i = 0; i < option.choices.size(); ++i) {
    if (i > 0) out += i + 1 == option.choices.size() ? " or " : ", ";
    out += "\"" + std::string(option.choices[i]) + "\"";
  }
  return out;
}

}  // namespace

ReportValue ReportValue::boolean(bool b) {
  ReportValue v;
  v.kind = Kind::Bool;
  v.flag = b;
  return v;
}

ReportValue ReportValue::integer(std::int64_t n) {
  ReportValue v;
  v.kind = Kind::Int;
  v.number = n;
  return v;
}

ReportValue ReportValue::position(std::size_t i) {
  ReportValue v;
  v.kind = Kind::Position;
  v.number = static_cast<std::int64_t>(i);
  return v;
}

ReportValue ReportValue::string(std::string s) {
  ReportValue v;
  v.kind = Kind::Text;
  v.text = std::move(s);
  return v;
}

ReportValue ReportValue::node_ref(NodeId n) {
  ReportValue v;
  v.kind = Kind::Node;
  v.node = n;
  return v;
}

ReportValue ReportValue::list() {
  ReportValue v;
  v.kind = Kind::List;
  return v;
}

ReportValue ReportValue::record() {
  ReportValue v;
  v.kind = Kind::Record;
  return v;
}

ReportValue& ReportValue::add(ReportValue v) {
  items.push_back(std::move(v));
  return *this;
}

ReportValue& ReportValue::set(std::string key, ReportValue v) {
  keys.push_back(std::move(key));
  items.push_back(std::move(v));
  return *this;
}

void PassOptions::set(std::string name, OptionValue value) {
  for (auto& [key, old] : values_)
    if (key == name) {
      old = std::move(value);
      return;
    }
  values_.emplace_back(std::move(name), std::move(value));
}

bool PassOptions::flag(std::string_view name, bool fallback) const {
  for (const auto& [key, value] : values_)
    if (key == name && std::holds_alternative<bool>(value)) return std::get<bool>(value);
  return fallback;
}

std::string PassOptions::word(std::string_view name, std::string_view fallback) const {
  for (const auto& [key, value] : values_)
    if (key == name && std::holds_alternative<std::string>(value)) return std::get<std::string>(value);
  return std::string(fallback);
}

std::span<const PassInfo* const> pass_registry() { return kPasses; }

const PassInfo* find_pass(std::string_view name) {
  for (const PassInfo* pass : kPasses)
    if (pass->name == name) return pass;
  return nullptr;
}

std::string pass_names() {
  std::string out;
  for (const PassInfo* pass : kPasses) out += (out.empty() ? "" : ", ") + std::string(pass->name);
  return out;
}

Status check_options(const PassInfo& pass, const PassOptions& options, std::string_view caller) {
  for (const auto& [key, value] : options.given()) {
    auto declared = std::find_if(pass.options.begin(), pass.options.end(),
                                 [&key = key](const PassOption& o) { return o.name == key; });
    if (declared == pass.options.end()) {
      std::string known;
      for (const PassOption& o : pass.options) known += (known.empty() ? "" : ", ") + std::string(o.name);
      return Status::error(std::string(caller) + ": unknown option '" + key + "' (" +
                           (known.empty() ? "it takes none" : known) + ")");
    }
    if (declared->choices.empty()) {
      if (!std::holds_alternative<bool>(value))
        return Status::error(std::string(caller) + ": " + key + " must be true or false");
      continue;
    }
    const std::string* word = std::get_if<std::string>(&value);
    if (word == nullptr ||
        std::find(declared->choices.begin(), declared->choices.end(), *word) == declared->choices.end())
      return Status::error(std::string(caller) + ": " + key + " must be " + choices_text(*declared) + ", not " +
                           (word == nullptr ? std::string("a flag") : "\"" + *word + "\""));
  }
  return Status::ok();
}

Result<ReportValue> run_pass(const PassInfo& pass, PassContext& context, const PassOptions& options) {
  if (Status st = check_options(pass, options, pass.name); !st) return st;
  return pass.run(context, options);
}

}  // namespace graft
