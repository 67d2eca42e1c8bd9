// A pipeline as the host holds it while running: the script's declarations read once into
// C++ (names, kinds, limits) with registry references to the Lua functions.
#pragma once

#include <string>
#include <vector>

#include <lua.hpp>

#include "graft/status.hpp"

namespace graft {
class Graph;
class ModuleTable;
}  // namespace graft

namespace graft::lua {
struct OnlyRule;  // graft/lua/pipeline.hpp
}  // namespace graft::lua

namespace graft::lua::detail {

class SandboxState;

struct Step {
  enum class Kind { LuaPass, Transformer, Builtin, Fixpoint };
  Kind kind = Kind::LuaPass;
  std::string name;
  int ref = LUA_NOREF;  ///< LuaPass: the function; Transformer: the handler table
  int max_iterations = 0;
  std::vector<Step> children;  ///< Fixpoint
};

struct Check {
  std::string name;
  int ref = LUA_NOREF;  ///< LUA_NOREF: the built-in lint
  int line = 0;  ///< where the check function is defined (0: lint)
};

struct PipelineSpec {
  std::string name;
  std::vector<Step> steps;
  std::vector<Check> checks;
  bool run_checks_after_each_pass = false;
  bool suppress_check_failures = false;
  int sweeps = 1;
};

/// Reads the main value of the sandbox into `spec` (in protected mode; refs are taken); with
/// `only`, the steps that run one rule of a rule script (OnlyRule).
Status read_pipeline(SandboxState& s, PipelineSpec& spec, const OnlyRule* only);
/// Drops the registry references `spec` holds.
void release_pipeline(SandboxState& s, PipelineSpec& spec);

/// Rebuilds `before` into `after` by running the transformer's handlers (FX's Transformer).
/// Called in protected mode; raises Lua errors.
void run_transformer(lua_State* L, SandboxState& s, int handlers_ref, const Graph& before, const ModuleTable* modules,
                     Graph& after);

}  // namespace graft::lua::detail
