// Rule scripts seen from the host (graft/lua/rules.hpp).
#include "graft/lua/rules.hpp"

#include "callbacks.hpp"
#include "rule_api.hpp"
#include "sandbox_state.hpp"

namespace graft::lua {

Status with_rules(Sandbox& sandbox, const GraphModule* gm,
                  const std::function<Status(const std::vector<RuleView>&)>& body) {
  detail::SandboxState& s = sandbox.state();
  Status result;
  Graph empty;
  Graph& g = gm != nullptr ? const_cast<Graph&>(gm->graph) : empty;  // opened read-only
  Status st = s.protected_call(
      [&](lua_State* L) {
        const detail::SessionScope session_scope(
            s, GraphModuleRef::graph_only(g, gm != nullptr ? &gm->modules : nullptr), true);
        const int session = session_scope.id();
        s.push_main(L);
        const int main = lua_gettop(L);
        if (luaL_testudata(L, main, "graft.Rule") == nullptr && luaL_testudata(L, main, "graft.RuleSet") == nullptr)
          luaL_error(L, "the script must return a rule set (graft.rules{...}) or a rule (graft.rule{...}), not a %s",
                     luaL_typename(L, main));
        std::vector<Rule> rules = detail::rules_of(L, main);
        const std::vector<detail::RuleExamples> facts = detail::rule_examples_of(L, main);
        std::vector<RuleView> views;
        for (std::size_t i = 0; i < rules.size(); ++i) {
          const Rule& r = rules[i];
          RuleView v{r.name, r.priority, r.enabled, r.matcher.get(), {}, facts[i].examples, facts[i].exact};
          if (r.filter) {
            auto f = r.filter;
            const Graph* pattern = &r.matcher->pattern();
            v.filter = [f, pattern](const SubgraphMatch& m, const Graph& graph) { return f(m, graph, *pattern); };
          }
          views.push_back(std::move(v));
        }
        detail::CallbackScope scope(L, session);
        result = body(views);
        scope.raise_if_failed(L, nullptr);  // the error says what raised (pattern predicate: ...)
      },
      false);
  if (!st) return st;
  return result;
}

}  // namespace graft::lua
