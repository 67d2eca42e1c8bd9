// The PassManager: reads a script's pipeline declaration and runs it, one transaction per pass.
#include "graft/lua/pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "graft/ir/graph_diff.hpp"
#include "graft/ir/lint.hpp"
#include "graft/ir/transaction.hpp"
#include "graft/lua/sandbox.hpp"
#include "graft/passes/pass_registry.hpp"
#include "handles.hpp"
#include "lua_json.hpp"
#include "pipeline_spec.hpp"
#include "rule_api.hpp"
#include "sandbox_state.hpp"

namespace graft::lua {
namespace detail {
namespace {

/// Where a Lua function was defined, as `file:line`.
std::string location_of(lua_State* L, int index) {
  lua_Debug ar;
  lua_pushvalue(L, index);
  if (!lua_getinfo(L, ">S", &ar)) return "?";
  std::string src = ar.source ? ar.source : "?";
  if (!src.empty() && (src[0] == '@' || src[0] == '=')) src.erase(0, 1);
  return fmt::format("{}:{}", src, ar.linedefined);
}

std::string optional_name(lua_State* L, int table) {
  std::string name;
  if (lua_getfield(L, table, "name") == LUA_TSTRING) name = lua_tostring(L, -1);
  lua_pop(L, 1);
  return name;
}

constexpr int kMaxNesting = 32;  // fixpoint groups inside groups; also stops cycles
constexpr lua_Integer kMaxSteps = 10000;

void read_step(lua_State* L, int index, Step& step, int depth);

/// The sequence at `table`.`field`: a plain table (raw access: no metamethod runs), capped.
lua_Integer checked_list(lua_State* L, int table, const char* field, const char* what) {
  lua_getfield(L, table, field);
  if (!lua_istable(L, -1)) luaL_error(L, "%s: '%s' must be a list", what, field);
  const auto n = static_cast<lua_Integer>(lua_rawlen(L, -1));
  if (n > kMaxSteps)
    luaL_error(L, "%s: '%s' has %d entries (at most %d)", what, field, static_cast<int>(n),
               static_cast<int>(kMaxSteps));
  return n;
}

void read_steps(lua_State* L, int table, std::vector<Step>& steps, int depth) {
  if (depth > kMaxNesting)
    luaL_error(L, "fixpoint groups nested more than %d deep (or one contains itself)", kMaxNesting);
  luaL_checkstack(L, 8, "pipeline");
  const lua_Integer n = checked_list(L, table, "passes", "pipeline");
  const int list = lua_gettop(L);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, list, i);
    steps.emplace_back();
    read_step(L, lua_gettop(L), steps.back(), depth);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

void read_step(lua_State* L, int index, Step& step, int depth) {
  index = lua_absindex(L, index);
  if (lua_type(L, index) == LUA_TFUNCTION) {
    step.kind = Step::Kind::LuaPass;
    step.name = location_of(L, index);
    lua_pushvalue(L, index);
    step.ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return;
  }
  if (lua_type(L, index) == LUA_TSTRING) {
    step.kind = Step::Kind::Builtin;
    step.name = lua_tostring(L, index);
    if (find_pass(step.name) == nullptr)
      luaL_error(L, "unknown built-in pass '%s' (%s)", step.name.c_str(), pass_names().c_str());
    return;
  }
  if (!lua_istable(L, index)) luaL_error(L, "expected a pass, found a %s", luaL_typename(L, index));
  lua_getfield(L, index, "kind");
  const std::string kind = lua_tostring(L, -1) ? lua_tostring(L, -1) : "";
  lua_pop(L, 1);
  step.name = optional_name(L, index);
  if (kind == "pass") {
    step.kind = Step::Kind::LuaPass;
    lua_getfield(L, index, "run");
    if (step.name.empty()) step.name = location_of(L, -1);
    step.ref = luaL_ref(L, LUA_REGISTRYINDEX);
  } else if (kind == "transformer") {
    step.kind = Step::Kind::Transformer;
    if (step.name.empty()) {
      for (const char* h : {"call_function", "call_method", "call_module", "get_attr"}) {
        if (lua_getfield(L, index, h) == LUA_TFUNCTION && step.name.empty())
          step.name = "transformer at " + location_of(L, -1);
        lua_pop(L, 1);
      }
    }
    lua_pushvalue(L, index);
    step.ref = luaL_ref(L, LUA_REGISTRYINDEX);
  } else if (kind == "builtin") {
    step.kind = Step::Kind::Builtin;
  } else if (kind == "fixpoint") {
    step.kind = Step::Kind::Fixpoint;
    if (step.name.empty()) step.name = "fixpoint";
    lua_getfield(L, index, "max_iterations");
    const lua_Integer max = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
    if (max < 1 || max > 1'000'000) luaL_error(L, "fixpoint: 'max_iterations' must be an integer from 1 to 1000000");
    step.max_iterations = static_cast<int>(max);
    lua_pop(L, 1);
    read_steps(L, index, step.children, depth + 1);
  } else {
    luaL_error(L, "expected a pass, found a table of kind '%s'", kind.c_str());
  }
}

void release_steps(lua_State* L, std::vector<Step>& steps) {
  for (Step& s : steps) {
    if (s.ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, s.ref);
    s.ref = LUA_NOREF;
    release_steps(L, s.children);
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class Runner {
 public:
  Runner(SandboxState& s, PipelineSpec& spec, GraphModule& gm, PipelineReport& report)
      : s_(s), spec_(spec), gm_(gm), report_(report) {}

  void run() {
    if (!spec_.checks.empty()) {
      int line = 0;
      auto failures = run_checks("before the first pass", &line);
      if (!failures.empty()) {
        PassReport entry;
        entry.name = "(before the first pass)";
        entry.kind = "check";
        entry.check_failures = failures;
        if (!spec_.suppress_check_failures) {
          entry.ok = false;
          entry.error = failures.front();
          report_.passes.push_back(entry);
          stop(StopReason::CheckFailed, Diagnostic{.file = report_.script, .line = line, .message = failures.front()});
          return;
        }
        report_.passes.push_back(entry);
      }
    }
    for (int sweep = 1; sweep <= spec_.sweeps; ++sweep) {
      sweep_ = sweep;
      bool modified = false;
      for (const Step& step : spec_.steps) {
        bool step_modified = false;
        if (!run_step(step, 0, step_modified)) return;
        modified = modified || step_modified;
      }
      if (!modified) {
        report_.stop_reason = spec_.sweeps > 1 ? StopReason::Converged : StopReason::Completed;
        return;
      }
    }
    report_.stop_reason = spec_.sweeps > 1 ? StopReason::SweepLimit : StopReason::Completed;
  }

 private:
  void stop(StopReason reason, Diagnostic d) {
    report_.stop_reason = reason;
    report_.error = std::move(d);
  }

  /// Runs one step; false if the pipeline must stop.
  bool run_step(const Step& step, int iteration, bool& modified) {
    if (step.kind != Step::Kind::Fixpoint) return run_single(step, iteration, modified);
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t first_entry = report_.passes.size();
    PassReport group;
    group.name = step.name;
    group.kind = "fixpoint";
    group.sweep = sweep_;
    group.stop_reason = StopReason::IterationLimit;
    for (int it = 1; it <= step.max_iterations; ++it) {
      group.iteration = it;
      bool any = false;
      for (const Step& child : step.children) {
        bool child_modified = false;
        if (!run_step(child, it, child_modified)) return false;
        any = any || child_modified;
      }
      modified = modified || any;
      if (!any) {
        group.stop_reason = StopReason::Converged;
        break;
      }
    }
    for (std::size_t i = first_entry; i < report_.passes.size(); ++i) {
      if (report_.passes[i].kind == "fixpoint") continue;  // nested groups: their passes count
      group.nodes_added += report_.passes[i].nodes_added;
      group.nodes_removed += report_.passes[i].nodes_removed;
      group.nodes_changed += report_.passes[i].nodes_changed;
    }
    group.seconds = seconds_since(t0);
    report_.passes.push_back(group);
    return true;
  }

  bool run_single(const Step& step, int iteration, bool& modified) {
    PassReport entry;
    entry.name = step.name;
    entry.sweep = sweep_;
    entry.iteration = iteration;
    const auto t0 = std::chrono::steady_clock::now();
    const bool in_place = step.kind != Step::Kind::Transformer;
    // A pass that edits in place runs in a transaction over the graph and its module table
    // (run_pipeline refuses a graph with one open, so this is the outermost); a Transformer
    // builds a new graph and keeps the old one.
    std::optional<Transaction> transaction;
    if (in_place) transaction.emplace(gm_);
    gm_.graph.set_insert_point(InsertPoint::at_end());  // each pass starts appending at the end
    const auto t_pass = std::chrono::steady_clock::now();
    Graph rebuilt;
    const std::string what = fmt::format("pass '{}'", step.name);
    Status st;
    switch (step.kind) {
      case Step::Kind::LuaPass: {
        entry.kind = "pass";
        // Rule sets the pass applies report into its entry, per rule.
        s_.on_rules_applied = [&entry](const std::vector<RuleStats>& stats, const std::string& stop) {
          for (const RuleStats& rule : stats) {
            auto it = std::find_if(entry.rules.begin(), entry.rules.end(),
                                   [&rule](const RuleStats& r) { return r.name == rule.name; });
            if (it == entry.rules.end()) it = entry.rules.insert(entry.rules.end(), RuleStats{rule.name});
            it->add(rule);
          }
          entry.rules_stop = stop;
        };
        st = s_.protected_call(
            [&](lua_State* L) {
              SessionScope session(s_, GraphModuleRef::whole(gm_), false);
              lua_rawgeti(L, LUA_REGISTRYINDEX, step.ref);
              push_graph(L, session.id());
              lua_call(L, 1, 1);
              if (!lua_isnil(L, -1)) entry.result_json = to_json(L, -1, "the value the pass returned");
            },
            false, what);
        s_.on_rules_applied = nullptr;
        break;
      }
      case Step::Kind::Transformer:
        entry.kind = "transformer";
        st = s_.protected_call(
            [&](lua_State* L) { run_transformer(L, s_, step.ref, gm_.graph, &gm_.modules, rebuilt); }, false, what);
        break;
      case Step::Kind::Builtin:
        entry.kind = "builtin";
        st = run_builtin(step.name);
        break;
      case Step::Kind::Fixpoint: break;
    }
    entry.seconds = seconds_since(t_pass);
    // An insertion scope a pass opened and never closed must not leak into the next pass.
    gm_.graph.set_insert_point(InsertPoint::at_end());
    if (st) {
      Status valid = lint(in_place ? gm_.graph : rebuilt, &gm_.modules);
      if (valid) valid = lint_submodule_graphs(gm_.modules);  // a pass may edit submodules' graphs too
      if (!valid)
        st = Status::error(Diagnostic{.file = s_.script_name(),
                                      .message = fmt::format("{} left an invalid graph: {}", what, valid.message())});
    }
    if (!st) {
      if (transaction) transaction->rollback();  // a failed Transformer never touched gm_
      entry.ok = false;
      entry.error = st.message();
      entry.transaction_seconds = seconds_since(t0) - entry.seconds;
      report_.passes.push_back(entry);
      stop(StopReason::PassFailed, st.diagnostic());
      return false;
    }
    Graph previous;  // a Transformer's input, kept until its checks pass
    GraphDiff diff;
    if (in_place) {
      diff = transaction->diff();
    } else {
      diff = diff_by_name(gm_.graph, rebuilt);
      previous = std::move(gm_.graph);
      gm_.graph = std::move(rebuilt);
    }
    entry.nodes_added = diff.added;
    entry.nodes_removed = diff.removed;
    entry.nodes_changed = diff.changed;
    // A pass that changed only the module table or a submodule's graph changed the graph module.
    modified = !diff.empty() || (in_place && gm_.modules.changed_in_transaction());
    if (spec_.run_checks_after_each_pass && !spec_.checks.empty()) {
      int line = 0;
      auto failures = run_checks(fmt::format("after pass '{}'", step.name), &line);
      if (!failures.empty()) {
        entry.check_failures = failures;
        if (!spec_.suppress_check_failures) {
          if (transaction) transaction->rollback();
          else gm_.graph = std::move(previous);
          entry.ok = false;
          entry.error = failures.front();
          entry.nodes_added = entry.nodes_removed = entry.nodes_changed = 0;  // undone
          entry.transaction_seconds = seconds_since(t0) - entry.seconds;
          report_.passes.push_back(entry);
          stop(StopReason::CheckFailed,
               Diagnostic{.file = s_.script_name(), .line = line, .message = failures.front()});
          return false;
        }
      }
    }
    if (transaction) transaction->commit();
    entry.transaction_seconds = seconds_since(t0) - entry.seconds;
    report_.passes.push_back(entry);
    return true;
  }

  Status run_builtin(const std::string& name) {
    const PassInfo* pass = find_pass(name);
    if (pass == nullptr)
      return Status::error(Diagnostic{.file = s_.script_name(), .message = "unknown built-in pass '" + name + "'"});
    PassContext context{.target = GraphModuleRef::whole(gm_), .schemas = *s_.schemas(), .wants_report = false};
    Result<ReportValue> report = run_pass(*pass, context);
    if (!report)
      return Status::error(Diagnostic{.file = s_.script_name(), .message = name + ": " + report.status().message()});
    return Status::ok();
  }

  /// Runs every check on the current graph (read-only); returns the failures' messages.
  /// `first_line`: the line of the first failure (the error's, else where the check is defined).
  std::vector<std::string> run_checks(const std::string& when, int* first_line = nullptr) {
    std::vector<std::string> failures;
    auto located = [&](int line) {
      if (first_line != nullptr && failures.size() == 1) *first_line = line;
    };
    for (const Check& check : spec_.checks) {
      if (check.ref == LUA_NOREF) {
        Status st = lint(gm_);
        if (!st) failures.push_back(fmt::format("check 'lint' failed {}: {}", when, st.message()));
        continue;
      }
      std::string complaint;
      Status st = s_.protected_call(
          [&](lua_State* L) {
            SessionScope session(s_, GraphModuleRef::graph_only(gm_.graph, &gm_.modules), true);
            lua_rawgeti(L, LUA_REGISTRYINDEX, check.ref);
            push_graph(L, session.id());
            lua_call(L, 1, 2);
            if (lua_type(L, -2) == LUA_TBOOLEAN && !lua_toboolean(L, -2)) {
              complaint = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "returned false";
            }
          },
          false);
      if (!st) {
        failures.push_back(fmt::format("check '{}' failed {}: {}", check.name, when, st.message()));
        located(st.diagnostic().line != 0 ? st.diagnostic().line : check.line);
      } else if (!complaint.empty()) {
        failures.push_back(fmt::format("check '{}' failed {}: {}", check.name, when, complaint));
        located(check.line);
      }
    }
    return failures;
  }

  SandboxState& s_;
  PipelineSpec& spec_;
  GraphModule& gm_;
  PipelineReport& report_;
  int sweep_ = 1;
};

}  // namespace

namespace {

/// The steps that run rule `only.name` alone of the rule set or rule at `main`.
void read_only_rule(lua_State* L, int main, const OnlyRule& only, PipelineSpec& spec) {
  if (luaL_testudata(L, main, "graft.RuleSet") == nullptr && luaL_testudata(L, main, "graft.Rule") == nullptr)
    luaL_error(L, "the script must return a rule set (graft.rules{...}) or a rule (graft.rule{...}), not a %s",
               luaL_typename(L, main));
  const std::vector<Rule> rules = rules_of(L, main);
  std::string names;
  bool found = false;
  for (const Rule& r : rules) {
    names += (names.empty() ? "" : ", ") + r.name;
    found = found || r.name == only.name;
  }
  if (!found) luaL_error(L, "the script has no rule '%s' (%s)", only.name.c_str(), names.c_str());
  if (only.dead_code_first) {
    lua_pushliteral(L, "dead_code_elimination");
    spec.steps.emplace_back();
    read_step(L, lua_gettop(L), spec.steps.back(), 0);
  }
  // g:apply's options {enable = {name}, disable = {the others}}: this rule alone, even disabled.
  lua_createtable(L, 0, 2);
  const int options = lua_gettop(L);
  lua_createtable(L, 1, 0);
  lua_pushlstring(L, only.name.data(), only.name.size());
  lua_rawseti(L, -2, 1);
  lua_setfield(L, options, "enable");
  lua_createtable(L, static_cast<int>(rules.size()), 0);
  lua_Integer others = 0;
  for (const Rule& r : rules) {
    if (r.name == only.name) continue;
    lua_pushlstring(L, r.name.data(), r.name.size());
    lua_rawseti(L, -2, ++others);
  }
  lua_setfield(L, options, "disable");
  push_rules_pass(L, main, options);
  spec.steps.emplace_back();
  read_step(L, lua_gettop(L), spec.steps.back(), 0);
}

}  // namespace

Status read_pipeline(SandboxState& s, PipelineSpec& spec, const OnlyRule* only) {
  return s.protected_call(
      [&](lua_State* L) {
        s.push_main(L);
        const int main = lua_gettop(L);
        if (only != nullptr) {
          read_only_rule(L, main, *only, spec);
          spec.name = "rule " + only->name;
          return;
        }
        const int type = lua_type(L, main);
        std::string kind;
        if (type == LUA_TTABLE) {
          lua_getfield(L, main, "kind");
          kind = lua_tostring(L, -1) ? lua_tostring(L, -1) : "";
          lua_pop(L, 1);
        }
        if (kind == "pipeline") {
          spec.name = optional_name(L, main);
          read_steps(L, main, spec.steps, 0);
          const lua_Integer n = checked_list(L, main, "checks", "pipeline");
          for (lua_Integer i = 1; i <= n; ++i) {
            Check c;
            const int t = lua_rawgeti(L, -1, i);
            if (t == LUA_TFUNCTION) {
              c.name = location_of(L, -1);
              lua_Debug ar;
              lua_pushvalue(L, -1);
              if (lua_getinfo(L, ">S", &ar) != 0) c.line = ar.linedefined;
              c.ref = luaL_ref(L, LUA_REGISTRYINDEX);
            } else if (t == LUA_TSTRING && std::string_view(lua_tostring(L, -1)) == "lint") {
              c.name = "lint";
              lua_pop(L, 1);
            } else {
              luaL_error(L, "pipeline: checks[%d] must be a function(graph) or 'lint'", static_cast<int>(i));
            }
            spec.checks.push_back(c);
          }
          lua_pop(L, 1);
          lua_getfield(L, main, "run_checks_after_each_pass");
          spec.run_checks_after_each_pass = lua_toboolean(L, -1);
          lua_getfield(L, main, "suppress_check_failures");
          spec.suppress_check_failures = lua_toboolean(L, -1);
          lua_getfield(L, main, "steps");
          const lua_Integer sweeps = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 1;
          if (sweeps < 1 || sweeps > 1'000'000) luaL_error(L, "pipeline: 'steps' must be an integer from 1 to 1000000");
          spec.sweeps = static_cast<int>(sweeps);
          lua_pop(L, 3);
        } else if (type == LUA_TFUNCTION || type == LUA_TSTRING || kind == "pass" || kind == "transformer" ||
                   kind == "builtin" || kind == "fixpoint") {
          spec.steps.emplace_back();
          read_step(L, main, spec.steps.back(), 0);
        } else if (type == LUA_TUSERDATA &&
                   (luaL_testudata(L, main, "graft.RuleSet") != nullptr ||
                    luaL_testudata(L, main, "graft.Rule") != nullptr)) {
          push_rules_pass(L, main);  // a rule set alone: applied to a fixed point
          spec.steps.emplace_back();
          read_step(L, lua_gettop(L), spec.steps.back(), 0);
        } else {
          luaL_error(L, "the script must return a pipeline (graft.pipeline{...}), a pass or a rule set; it returned %s",
                     type == LUA_TTABLE ? "a table that is neither" : luaL_typename(L, main));
        }
        if (spec.name.empty()) spec.name = s.script_name();
      },
      false);
}

void release_pipeline(SandboxState& s, PipelineSpec& spec) {
  release_steps(s.L(), spec.steps);
  for (Check& c : spec.checks) {
    if (c.ref != LUA_NOREF) luaL_unref(s.L(), LUA_REGISTRYINDEX, c.ref);
    c.ref = LUA_NOREF;
  }
}

}  // namespace detail

std::size_t PipelineReport::nodes_added() const {
  std::size_t n = 0;
  for (const auto& p : passes)
    if (p.kind != "fixpoint") n += p.nodes_added;
  return n;
}
std::size_t PipelineReport::nodes_removed() const {
  std::size_t n = 0;
  for (const auto& p : passes)
    if (p.kind != "fixpoint") n += p.nodes_removed;
  return n;
}
std::size_t PipelineReport::nodes_changed() const {
  std::size_t n = 0;
  for (const auto& p : passes)
    if (p.kind != "fixpoint") n += p.nodes_changed;
  return n;
}

std::string PipelineReport::to_json() const {
  nlohmann::ordered_json j;
  j["pipeline"] = pipeline;
  j["script"] = script;
  j["script_version"] = script_version;
  j["ok"] = ok();
  j["stop_reason"] = stop_reason_name(stop_reason);
  if (error) {
    nlohmann::ordered_json e;
    e["message"] = error->message;
    if (!error->file.empty()) e["file"] = error->file;
    if (error->line) e["line"] = error->line;
    if (!error->node.empty()) e["node"] = error->node;
    e["text"] = error->to_string();
    j["error"] = e;
  }
  j["nodes_before"] = nodes_before;
  j["nodes_after"] = nodes_after;
  j["seconds"] = seconds;
  auto& list = j["passes"] = nlohmann::ordered_json::array();
  for (const PassReport& p : passes) {
    nlohmann::ordered_json e;
    e["name"] = p.name;
    e["kind"] = p.kind;
    e["sweep"] = p.sweep;
    if (p.iteration) e["iteration"] = p.iteration;
    e["ok"] = p.ok;
    e["seconds"] = p.seconds;
    if (p.kind != "fixpoint") e["transaction_seconds"] = p.transaction_seconds;
    e["nodes_added"] = p.nodes_added;
    e["nodes_removed"] = p.nodes_removed;
    e["nodes_changed"] = p.nodes_changed;
    if (p.stop_reason) e["stop_reason"] = stop_reason_name(*p.stop_reason);
    if (!p.error.empty()) e["error"] = p.error;
    if (!p.check_failures.empty()) e["check_failures"] = p.check_failures;
    if (!p.rules.empty()) {
      auto& rules = e["rules"] = nlohmann::ordered_json::array();
      for (const auto& r : p.rules)
        rules.push_back({{"name", r.name},
                         {"matches", r.matches},
                         {"filtered", r.filtered},
                         {"undone", r.undone},
                         {"rewrites", r.rewrites}});
      e["rules_stop"] = p.rules_stop;
    }
    if (!p.result_json.empty()) e["result"] = nlohmann::ordered_json::parse(p.result_json);
    list.push_back(std::move(e));
  }
  return j.dump(2) + "\n";
}

std::string PipelineReport::to_text() const {
  std::string out = fmt::format("pipeline {} ({})\n", pipeline, script);
  for (const PassReport& p : passes) {
    std::string where = p.iteration ? fmt::format(" [iteration {}]", p.iteration) : "";
    if (!p.ok) {
      out += fmt::format("  {:<32} {:>9.3f} ms  FAILED: {}\n", p.name + where, p.seconds * 1e3, p.error);
      continue;
    }
    out += fmt::format("  {:<32} {:>9.3f} ms  +{} -{} ~{}{}\n", p.name + where, p.seconds * 1e3, p.nodes_added,
                       p.nodes_removed, p.nodes_changed,
                       p.stop_reason ? "  (" + std::string(stop_reason_name(*p.stop_reason)) + ")" : "");
    for (const auto& f : p.check_failures) out += fmt::format("    check failure (suppressed): {}\n", f);
    if (!p.rules.empty()) {
      std::string line;
      for (const auto& r : p.rules)
        if (r.matches > 0) line += fmt::format("{}{} {}/{}", line.empty() ? "" : ", ", r.name, r.rewrites, r.matches);
      out +=
          fmt::format("    rules ({}): {}\n", p.rules_stop, line.empty() ? "no matches" : line + " rewritten/matched");
    }
  }
  out += fmt::format("  {}: {} -> {} nodes in {:.3f} s ({})\n", ok() ? "ok" : "stopped", nodes_before, nodes_after,
                     seconds, stop_reason_name(stop_reason));
  return out;
}

PipelineReport run_pipeline(Sandbox& sandbox, GraphModule& gm, const OnlyRule* only) {
  detail::SandboxState& s = sandbox.state();
  s.forget_retained_memory();  // what earlier runs copied into their graphs is not this run's
  s.clear_stop();
  const auto pipeline_time = s.options().limits.pipeline_time;
  if (pipeline_time.count() > 0) s.budget().pipeline_deadline = std::chrono::steady_clock::now() + pipeline_time;
  PipelineReport report;
  report.script = s.script_name();
  report.nodes_before = gm.graph.size();
  const auto t0 = std::chrono::steady_clock::now();
  detail::PipelineSpec spec;
  Status st = gm.graph.in_transaction()
      ? Status::error(Diagnostic{
            .file = report.script,
            .message = "the graph has an open transaction; commit or roll it back before running a pipeline"})
      : detail::read_pipeline(s, spec, only);
  if (st) {
    // Same script, same graph, same output: math.random starts from the host's seed every run.
    st = s.protected_call(
        [&](lua_State* L) {
          lua_getfield(L, LUA_REGISTRYINDEX, "graft.randomseed");
          lua_pushinteger(L, static_cast<lua_Integer>(s.options().seed));
          lua_call(L, 1, 0);
        },
        false);
  }
  if (!st) {
    report.stop_reason = StopReason::InvalidPipeline;
    report.error = st.diagnostic();
  } else {
    report.pipeline = spec.name;
    detail::Runner(s, spec, gm, report).run();
  }
  detail::release_pipeline(s, spec);
  s.budget().pipeline_deadline.reset();
  report.nodes_after = gm.graph.size();
  report.seconds = detail::seconds_since(t0);
  return report;
}

Status validate_pipeline(Sandbox& sandbox) {
  detail::PipelineSpec spec;
  Status st = detail::read_pipeline(sandbox.state(), spec, nullptr);
  detail::release_pipeline(sandbox.state(), spec);
  return st;
}

}  // namespace graft::lua
