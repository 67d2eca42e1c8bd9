// The Lua layer (graft::lua): sandboxed scripts, pipelines, rule sets from scripts, and the
// ScriptHost that reloads them while the host runs.
#pragma once

#include "graft/engine.hpp"
#include "graft/lua/limits.hpp"
#include "graft/lua/pipeline.hpp"
#include "graft/lua/rules.hpp"
#include "graft/lua/sandbox.hpp"
#include "graft/lua/script_host.hpp"
#include "graft/lua/support.hpp"
