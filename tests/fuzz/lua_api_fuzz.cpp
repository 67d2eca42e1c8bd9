// libFuzzer target: the Lua API driven by generated scripts. The bytes are read as a program
// for a small script generator: each step picks an API call (edits, erases, moves, values of
// every kind, patterns, rules, DCE, sort, metadata) and its operands, and the script runs as a
// pass in a sandbox with small budgets. Errors raised by the API are expected (each step runs
// under pcall); what must not happen is a crash, a hang, a sanitizer report, a pass that fails
// and leaves the graph changed, or a pass that succeeds and leaves a graph that fails lint or
// does not save and load back. GRAFT_FUZZ_PRINT=1 prints each generated script.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/ir/lint.hpp"
#include "graft/lua/pipeline.hpp"
#include "graft/lua/sandbox.hpp"

namespace {

using graft::fuzz::fail;

constexpr std::string_view kGraph = R"({"format":"graft-graph","version":1,"meta":{},"modules":[
{"path":"","class":"M","parameters":[],"buffers":[{"name":"c","shape":[4],"dtype":"float32"}]},
{"path":"relu","class":"torch.nn.modules.activation.ReLU","parameters":[],"buffers":[]}],"nodes":[
{"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"y","op":"placeholder","target":"y","args":[],"kwargs":{},"meta":{}},
{"name":"c","op":"get_attr","target":"c","args":[],"kwargs":{},"meta":{}},
{"name":"add","op":"call_function","target":"torch.add","args":[{"node":"x"},{"node":"y"}],"kwargs":{"alpha":2},"meta":{"stack_trace":"f.py:1"}},
{"name":"relu","op":"call_function","target":"torch.relu","args":[{"node":"add"}],"kwargs":{},"meta":{}},
{"name":"add_1","op":"call_function","target":"torch.add","args":[{"node":"relu"},{"node":"c"}],"kwargs":{},"meta":{}},
{"name":"relu_1","op":"call_module","target":"relu","args":[{"node":"add_1"}],"kwargs":{},"meta":{}},
{"name":"cat","op":"call_function","target":"torch.cat","args":[[{"node":"relu_1"},{"node":"relu"}]],"kwargs":{"dim":0},"meta":{}},
{"name":"sigmoid","op":"call_method","target":"sigmoid","args":[{"node":"cat"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"sigmoid"}],"kwargs":{},"meta":{}}]}
)";

/// Reads the fuzzer's bytes as choices; past the end every choice is 0.
class Choices {
 public:
  Choices(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool done() const { return pos_ >= size_; }
  unsigned pick(unsigned n) { return n == 0 ? 0 : (pos_ < size_ ? data_[pos_++] : 0u) % n; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

constexpr const char* kTargets[] = {
    "torch.add", "torch.relu", "torch.mul", "torch.sigmoid", "_operator.getitem", "torch.ops.aten.add.Tensor",
    "torch.cat", "",           "x",         "output"};
constexpr const char* kMethods[] = {"sigmoid", "view", "transpose", "add"};
constexpr const char* kNames[] = {"x", "add", "relu_1", "output", "for", "n", "", "add_1", "a.b", "_tensor_constant0"};
constexpr const char* kKeys[] = {"alpha",   "dim",         "min",         "out",
                                 "inplace", "stack_trace", "tensor_meta", "nn_module_stack"};

std::string node_expr(Choices& c) { return "N(" + std::to_string(c.pick(16)) + ")"; }

std::string value_expr(Choices& c, int depth = 0) {
  switch (c.pick(depth > 2 ? 9 : 14)) {
    case 0: return node_expr(c);
    case 1: return std::to_string(static_cast<int>(c.pick(7)) - 3);
    case 2: return std::to_string(c.pick(5)) + ".5";
    case 3: return "graft.None";
    case 4: return c.pick(2) ? "true" : "false";
    case 5: return "\"" + std::string(kNames[c.pick(10)]) + "\"";
    case 6: return "graft.dtype(\"" + std::string(c.pick(2) ? "float32" : "int64") + "\")";
    case 7: return "math.maxinteger";
    case 8: return "0/0";
    case 9: return "{" + value_expr(c, depth + 1) + ", " + value_expr(c, depth + 1) + "}";
    case 10: return "graft.tuple{" + value_expr(c, depth + 1) + "}";
    case 11: return "graft.dict{{\"" + std::string(kKeys[c.pick(8)]) + "\", " + value_expr(c, depth + 1) + "}, {1, 2}}";
    case 12: return "graft.slice(" + value_expr(c, depth + 1) + ", nil, 2)";
    default: return "{" + std::string(kKeys[c.pick(8)]) + " = " + value_expr(c, depth + 1) + "}";
  }
}

std::string pattern_expr(Choices& c) {
  switch (c.pick(5)) {
    case 0: return "graft.trace(function(a) return torch.relu(a) end)";
    case 1: return "graft.trace(function(a, b) return torch.add(a, b) end)";
    case 2: return "graft.trace(function(a, b) return torch.relu(torch.add(a, b, graft.kw{alpha = 2})) end)";
    case 3: return "graft.trace(function(a) return a:sigmoid() end)";
    default: return "graft.trace(function(a, b) return {torch.relu(a), b} end)";
  }
}

std::string statement(Choices& c) {
  const std::string n = node_expr(c);
  switch (c.pick(28)) {
    case 0: return n + ":erase()";
    case 1: return n + ":replace_all_uses_with(" + node_expr(c) + ")";
    case 2: return n + ":replace_input_with(" + node_expr(c) + ", " + node_expr(c) + ")";
    case 3: return n + ".args = {" + value_expr(c) + ", " + value_expr(c) + "}";
    case 4: return n + ":set_arg(" + std::to_string(c.pick(4)) + ", " + value_expr(c) + ")";
    case 5: return n + ":set_kwarg(\"" + kKeys[c.pick(8)] + "\", " + (c.pick(4) ? value_expr(c) : "nil") + ")";
    case 6: return n + ".target = \"" + kTargets[c.pick(10)] + "\"";
    case 7: return n + ".name = \"" + kNames[c.pick(10)] + "\"";
    case 8: return n + ":prepend(" + node_expr(c) + ")";
    case 9: return n + ":append(" + node_expr(c) + ")";
    case 10: return n + ":set_meta(\"" + kKeys[c.pick(8)] + "\", " + (c.pick(4) ? value_expr(c) : "nil") + ")";
    case 11:
      return "g:inserting_" + std::string(c.pick(2) ? "before" : "after") + "(" + n +
          ", function() return g:call_function(\"" + kTargets[c.pick(10)] + "\", {" + value_expr(c) + "}, " +
          value_expr(c) + ") end)";
    case 12:
      return "g:inserting_before(" + n + ", function() return g:call_method(\"" + kMethods[c.pick(4)] + "\", {" +
          node_expr(c) + ", " + value_expr(c) + "}) end)";
    case 13:
      return "g:inserting_after(" + n + ", function() return g:call_module(\"relu\", {" + node_expr(c) + "}) end)";
    case 14:
      return "g:inserting_after(" + n + ", function() return g:get_attr(\"" + (c.pick(2) ? "c" : "nope") + "\") end)";
    case 15: return "g:placeholder(\"" + std::string(kNames[c.pick(10)]) + "\")";
    case 16: return "g:eliminate_dead_code()";
    case 17: return "g:stable_topological_sort()";
    case 18: return "g:replace_pattern(" + pattern_expr(c) + ", " + pattern_expr(c) + ")";
    case 19: return "g:match(" + pattern_expr(c) + ", {match_output = " + (c.pick(2) ? "true" : "false") + "})";
    case 20:
      return "g:apply(graft.rules{graft.rule{name = \"r\", pattern = " + pattern_expr(c) +
          ", replacement = " + pattern_expr(c) + "}}" + (c.pick(2) ? ", {mode = \"once\"}" : "") + ")";
    case 21: return "local _ = " + n + ".users, " + n + ".args, " + n + ".kwargs, " + n + ".meta, " + n + ".schema";
    case 22: return "local _ = g:tabular(), g:lint(), tostring(" + n + ")";
    case 23:
      return std::string("g:partition{support = graft.support.targets{\"") + kTargets[c.pick(10)] + "\", \"" +
          kTargets[c.pick(10)] + "\"}, allows_single_node_partition = " + (c.pick(2) ? "true" : "false") +
          ", skip_horizontal_fusion = " + (c.pick(2) ? "true" : "false") +
          ", fuse = " + (c.pick(2) ? "true" : "false") + "}";
    case 24:
      return "g:fuse_partitions{{" + n + ", " + node_expr(c) + "}" + (c.pick(2) ? ", {" + node_expr(c) + "}" : "") +
          "}";
    case 25:
      return "g:add_submodule(\"m" + std::to_string(c.pick(3)) +
          "\", function(s) local x = s:placeholder(\"x\"); s:output(s:call_function(\"" + kTargets[c.pick(10)] +
          "\", {x})) end)";
    case 26: return "local _ = g:topo_sort{" + n + ", " + node_expr(c) + "}";
    default: return "g:erase_node(" + n + ")";
  }
}

std::string script(Choices& c) {
  std::string s =
      "local torch = graft.ns(\"torch\")\n"
      "return graft.pass{name = \"fuzz\", run = function(g)\n"
      "  local function N(i) local all = g:node_list(); return all[i % #all + 1] end\n";
  for (int steps = 0; !c.done() && steps < 64; ++steps) s += "  pcall(function() " + statement(c) + " end)\n";
  if (c.pick(4) == 0) s += "  error(\"the pass fails at the end\")\n";
  return s + "end}\n";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const graft::GraphModule kStart = graft::fuzz::fixed_graph(kGraph);
  static const std::string kStartText = graft::to_graph_json(kStart).value();
  Choices choices(data, size);
  const std::string code = script(choices);
  if (std::getenv("GRAFT_FUZZ_PRINT") != nullptr) std::fprintf(stderr, "%s", code.c_str());  // to reproduce a finding
  graft::lua::SandboxOptions options;
  options.limits.instructions = 2'000'000;
  options.limits.memory_bytes = std::size_t{32} << 20;
  options.log = [](std::string_view, std::string_view) {};
  auto sandbox = graft::lua::Sandbox::create(options);
  if (!sandbox) fail("no sandbox", sandbox.status().message());
  if (graft::Status s = sandbox.value()->load_string(code, "fuzz.lua"); !s)
    fail("a generated script does not load", s.message() + "\n" + code);
  graft::GraphModule gm = kStart;
  graft::lua::PipelineReport report = graft::lua::run_pipeline(*sandbox.value(), gm);
  graft::Result<std::string> text = graft::to_graph_json(gm);
  if (!report.ok()) {
    if (!text || text.value() != kStartText) fail("a failed pass left the graph changed", code);
    return 0;
  }
  if (graft::Status s = lint(gm); !s)
    fail("a pass succeeded and left a graph that fails lint", s.message() + "\n" + code);
  if (!text) fail("a pass succeeded and left a graph that cannot be saved", text.status().message() + "\n" + code);
  graft::Result<graft::GraphModule> again = graft::parse_graph_json(text.value(), "<saved>");
  if (!again) fail("a saved graph does not load", again.status().message() + "\n" + text.value());
  return 0;
}
