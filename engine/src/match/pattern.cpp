// Pattern: module classes by their public spelling, and pattern modules matched by class.
#include "graft/match/pattern.hpp"

namespace graft {

bool module_class_matches(std::string_view wanted, std::string_view actual) {
  if (wanted.empty()) return false;
  if (wanted == actual) return true;
  const auto wanted_dot = wanted.rfind('.');
  const auto actual_dot = actual.rfind('.');
  const std::string_view actual_name = actual_dot == std::string_view::npos ? actual : actual.substr(actual_dot + 1);
  if (wanted_dot == std::string_view::npos) return wanted == actual_name;  // bare class name
  // `torch.nn.Linear` is `torch.nn.modules.linear.Linear`: same class name, and the wanted
  // module prefix is a dotted prefix of the actual one.
  if (wanted.substr(wanted_dot + 1) != actual_name || actual_dot == std::string_view::npos) return false;
  const std::string_view wanted_module = wanted.substr(0, wanted_dot);
  const std::string_view actual_module = actual.substr(0, actual_dot);
  return actual_module.size() > wanted_module.size() &&
      actual_module.substr(0, wanted_module.size()) == wanted_module && actual_module[wanted_module.size()] == '.';
}

bool NodeConstraint::accepts_module_class(std::string_view actual) const {
  if (module_class_matches(module_class, actual)) return true;
  for (const std::string& c : other_module_classes)
    if (module_class_matches(c, actual)) return true;
  return false;
}

std::string NodeConstraint::module_classes_text() const {
  std::string text = module_class;
  for (const std::string& c : other_module_classes) text += " or " + c;
  return text;
}

void Pattern::match_modules_by_class() {
  for (NodeId n : graph.nodes()) {
    if (graph.op(n) != OpKind::CallModule) continue;
    const ModuleInfo* m = modules.find(graph.target(n));
    if (m != nullptr && !m->class_name.empty()) constrain(n).module_class = m->class_name;
  }
}

}  // namespace graft
