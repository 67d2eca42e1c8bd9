// Shared helpers for the Lua tests: small graphs as text, running a script on them.
#pragma once

#include <doctest/doctest.h>

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "graft/io/graph_json.hpp"
#include "graft/lua/pipeline.hpp"
#include "graft/lua/sandbox.hpp"

namespace graft::test {

/// A canonical graph file around the given node lines.
inline std::string graph_doc(const std::string& nodes, const std::string& modules = "[]") {
  return "{\n\"format\": \"graft-graph\",\n\"version\": 1,\n\"meta\": {},\n\"modules\": " + modules +
      ",\n\"nodes\": [\n" + nodes + "\n]\n}\n";
}

/// x, y -> add(x, y) -> relu -> output, all ATen.
inline std::string small_aten_graph() {
  return graph_doc(
      R"({"name":"x","op":"placeholder","target":"x","args":[],"kwargs":{},"meta":{}},
{"name":"y","op":"placeholder","target":"y","args":[],"kwargs":{},"meta":{}},
{"name":"add","op":"call_function","target":"torch.ops.aten.add.Tensor","args":[{"node":"x"},{"node":"y"}],"kwargs":{},"meta":{"stack_trace":"model.py:3"}},
{"name":"relu","op":"call_function","target":"torch.ops.aten.relu.default","args":[{"node":"add"}],"kwargs":{},"meta":{}},
{"name":"output","op":"output","target":"output","args":[{"node":"relu"}],"kwargs":{},"meta":{}})");
}

inline GraphModule parse(const std::string& text) {
  Result<GraphModule> r = parse_graph_json(text, "test.json");
  REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  return std::move(r).value();
}

inline std::string save(const GraphModule& gm) {
  Result<std::string> r = to_graph_json(gm);
  REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  return r.value();
}

inline std::unique_ptr<lua::Sandbox> sandbox_with(const std::string& script, lua::SandboxOptions options = {},
                                                  const char* name = "test.lua") {
  auto sb = lua::Sandbox::create(std::move(options));
  REQUIRE(sb.is_ok());
  Status st = sb.value()->load_string(script, name);
  REQUIRE_MESSAGE(st.is_ok(), st.message());
  return std::move(sb).value();
}

/// Runs `script` (which returns a pass or pipeline) on the graph `text`.
inline lua::PipelineReport run_on(const std::string& script, GraphModule& gm, lua::SandboxOptions options = {}) {
  auto sb = sandbox_with(script, std::move(options));
  return lua::run_pipeline(*sb, gm);
}

/// The files of `dir` whose names end in `extension` (".lua"), sorted: a test corpus.
inline std::vector<std::filesystem::path> corpus_files(const std::filesystem::path& dir, const std::string& extension) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == extension) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

inline void write_text(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

/// A fresh folder under the system temp dir, removed again at the end of the test.
struct TempDir {
  std::filesystem::path path;
  // The process id keeps two test runs at once (a build and a sanitizer build) apart.
  explicit TempDir(const char* name)
      : path(std::filesystem::temp_directory_path() / (std::string(name) + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace graft::test
