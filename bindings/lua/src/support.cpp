// Support scripts seen from the host (graft/lua/support.hpp).
#include "graft/lua/support.hpp"

#include "callbacks.hpp"
#include "sandbox_state.hpp"
#include "support_api.hpp"

namespace graft::lua {

Status with_support(Sandbox& sandbox, const GraphModule& gm,
                    const std::function<Status(const OperatorSupport&, const PartitionOptions&)>& body) {
  detail::SandboxState& s = sandbox.state();
  Status result;
  Graph& g = const_cast<Graph&>(gm.graph);  // opened read-only
  Status st = s.protected_call(
      [&](lua_State* L) {
        const detail::SessionScope session_scope(s, GraphModuleRef::graph_only(g, &gm.modules), true);
        s.push_main(L);
        const int main = lua_gettop(L);
        PartitionOptions options;
        if (lua_istable(L, main)) {
          options = detail::read_partition_options(L, main, "the script's partitioner table");
          lua_getfield(L, main, "support");
        } else {
          lua_pushvalue(L, main);
        }
        if (luaL_testudata(L, -1, "graft.Support") == nullptr)
          luaL_error(L,
                     "the script must return a support rule (graft.support.*) or a table {support = ..., "
                     "options...}, not a %s",
                     luaL_typename(L, -1));
        const OperatorSupport& support = detail::check_support(L, -1);
        detail::CallbackScope scope(L, session_scope.id());
        result = body(support, options);
        scope.raise_if_failed(L, nullptr);
      },
      false);
  if (!st) return st;
  return result;
}

}  // namespace graft::lua
