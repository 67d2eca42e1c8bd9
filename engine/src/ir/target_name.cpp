// Target names: `torch.ops.<ns>.<op>[.<overload>]`, and torch.fx's recorded function names.
#include "graft/ir/target_name.hpp"

#include <algorithm>
#include <utility>

#include "ir/embedded_data.hpp"

namespace graft {

namespace {

using NamePair = std::pair<std::string_view, std::string_view>;

struct FxNameTables {
  std::vector<NamePair> aliases;  // spelling, recorded name
  std::vector<NamePair> aten;  // recorded name, aten::op
  std::vector<std::string_view> methods;  // Tensor methods with ATen arguments
  std::vector<NamePair> signatures;  // recorded name, Python signature as a schema
};

/// The embedded tables, parsed on first use (thread-safe static); views into the embedded bytes.
const FxNameTables& fx_tables() {
  static const FxNameTables tables = [] {
    FxNameTables t;
    std::string_view text = detail::fx_target_names_text();
    while (!text.empty()) {
      const std::size_t end = std::min(text.find('\n'), text.size());
      std::string_view line = text.substr(0, end);
      text.remove_prefix(std::min(end + 1, text.size()));
      const std::size_t first = line.find(' ');
      if (line.empty() || line.front() == '#' || first == std::string_view::npos) continue;
      const std::string_view kind = line.substr(0, first);
      if (kind == "method") t.methods.push_back(line.substr(first + 1));
      const std::size_t second = line.find(' ', first + 1);
      if (second == std::string_view::npos) continue;
      NamePair pair{line.substr(first + 1, second - first - 1), line.substr(second + 1)};
      if (kind == "alias") t.aliases.push_back(pair);
      if (kind == "aten") t.aten.push_back(pair);
      if (kind == "signature") t.signatures.push_back(pair);
    }
    // The generator sorts; sorting again is cheap and keeps the lookups right whatever the file.
    std::sort(t.aliases.begin(), t.aliases.end());
    std::sort(t.aten.begin(), t.aten.end());
    std::sort(t.methods.begin(), t.methods.end());
    std::sort(t.signatures.begin(), t.signatures.end());
    return t;
  }();
  return tables;
}

std::string_view lookup(const std::vector<NamePair>& table, std::string_view key) {
  auto it = std::lower_bound(table.begin(), table.end(), key,
                             [](const NamePair& p, std::string_view k) { return p.first < k; });
  return it != table.end() && it->first == key ? it->second : std::string_view{};
}

}  // namespace

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

bool is_inplace_name(std::string_view name) { return !name.empty() && name.back() == '_' && !name.starts_with("__"); }

std::string_view fx_target_name(std::string_view spelling) {
  const std::string_view recorded = lookup(fx_tables().aliases, spelling);
  return recorded.empty() ? spelling : recorded;
}

std::vector<std::string_view> fx_target_spellings(std::string_view recorded) {
  std::vector<std::string_view> out;
  for (const NamePair& p : fx_tables().aliases)
    if (p.second == recorded) out.push_back(p.first);
  return out;
}

std::string_view aten_operator_of(std::string_view target) { return lookup(fx_tables().aten, fx_target_name(target)); }

std::string_view python_signature_text(std::string_view target) {
  return lookup(fx_tables().signatures, fx_target_name(target));
}

bool is_aten_method(std::string_view name) {
  const auto& m = fx_tables().methods;
  return std::binary_search(m.begin(), m.end(), name);
}

}  // namespace graft
