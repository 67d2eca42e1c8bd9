// The rewrite goldens: every tests/golden/rewrite/*.txt is "graph + rewrite => graph (or error)",
// in the graph text notation (graft/io/graph_text.hpp). A case file has sections, each a line
// `name:` at column 0 followed by lines indented by two spaces:
//
//   graph:        the input graph
//   pattern:      with replacement: replace_pattern(graph, pattern, replacement)
//   replacement:
//   options:      (on the same line) for replace_pattern: match_output, match_placeholder,
//                 keep_overlapping, ignore_literals
//   script:       or a Lua pass or pipeline run on the graph (lua::run_pipeline)
//   expect:       the whole resulting graph, or
//   error:        the error message, in full; the graph must then be exactly the input
//
// The input graph must lint. Metadata is not part of the notation: tests/cpp/rewrite_test.cpp
// covers what rewrites do to it.
//
// Lines starting with `#` at column 0 describe the case. The expected graph is written by hand
// from what torch.fx does (or what graft's documented rule is); the runner never writes it.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "graft/io/graph_text.hpp"
#include "graft/ir/lint.hpp"
#include "graft/lua/pipeline.hpp"
#include "graft/lua/sandbox.hpp"
#include "graft/rewrite/replace_pattern.hpp"
#include "lua_test_support.hpp"

using namespace graft;
namespace fs = std::filesystem;

namespace {

const fs::path kCases = fs::path(GRAFT_TEST_DATA) / ".." / "golden" / "rewrite";

struct GoldenCase {
  std::map<std::string, std::string> sections;
  std::string options;
};

GoldenCase read_case(const fs::path& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "cannot read " << path);
  GoldenCase c;
  std::string line, current;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') {
      if (!current.empty() && line.empty()) c.sections[current] += "\n";
      continue;
    }
    if (line[0] != ' ') {
      const std::size_t colon = line.find(':');
      REQUIRE_MESSAGE(colon != std::string::npos, path << ": expected a section such as 'graph:', got: " << line);
      current = line.substr(0, colon);
      static const std::vector<std::string> known{"graph",  "pattern", "replacement", "options",
                                                  "script", "expect",  "error"};
      REQUIRE_MESSAGE(std::find(known.begin(), known.end(), current) != known.end(),
                      path << ": unknown section '" << current << "'");
      REQUIRE_MESSAGE(!c.sections.count(current), path << ": section '" << current << "' given twice");
      c.sections[current];
      if (current == "options") c.options = line.substr(colon + 1);
      continue;
    }
    REQUIRE_MESSAGE(line.rfind("  ", 0) == 0, path << ": section lines are indented by two spaces: " << line);
    REQUIRE_MESSAGE(!current.empty(), path << ": a line before the first section");
    REQUIRE_MESSAGE(current != "options", path << ": options go on the 'options:' line itself");
    c.sections[current] += line.substr(2) + "\n";
  }
  return c;
}

Graph graph_from(const GoldenCase& c, const std::string& section, const fs::path& path) {
  Result<Graph> g = parse_graph_text(c.sections.at(section), path.filename().string() + ":" + section);
  REQUIRE_MESSAGE(g.is_ok(), g.status().message());
  return std::move(g).value();
}

ReplaceOptions replace_options(const std::string& words, const fs::path& path) {
  ReplaceOptions o;
  std::istringstream in(words);
  for (std::string w; in >> w;) {
    if (w == "match_output") o.match.match_output = true;
    else if (w == "match_placeholder") o.match.match_placeholder = true;
    else if (w == "keep_overlapping") o.match.remove_overlapping_matches = false;
    else if (w == "ignore_literals") o.match.ignore_literals = true;
    else FAIL(path << ": unknown option '" << w << "'");
  }
  return o;
}

/// Runs the case's rewrite on `gm`; the error message if it failed.
std::optional<std::string> run(const GoldenCase& c, GraphModule& gm, const fs::path& path) {
  if (c.sections.count("script")) {
    REQUIRE_MESSAGE(!c.sections.count("pattern"), path << ": give a script or a pattern, not both");
    auto sandbox = lua::Sandbox::create({});
    REQUIRE(sandbox.is_ok());
    if (Status s = sandbox.value()->load_string(c.sections.at("script"), path.filename().string()); !s)
      return s.message();
    lua::PipelineReport r = lua::run_pipeline(*sandbox.value(), gm);
    if (!r.ok()) return r.error->to_string();
    return std::nullopt;
  }
  REQUIRE_MESSAGE((c.sections.count("pattern") && c.sections.count("replacement")),
                  path << ": needs a script, or a pattern and a replacement");
  const Graph pattern = graph_from(c, "pattern", path);
  const Graph replacement = graph_from(c, "replacement", path);
  auto done = replace_pattern(gm.graph, pattern, replacement, replace_options(c.options, path));
  if (!done) return done.status().message();
  return std::nullopt;
}

}  // namespace

TEST_CASE("rewrite goldens: graph + rewrite => the expected graph or error (tests/golden/rewrite)") {
  const std::vector<fs::path> files = graft::test::corpus_files(kCases, ".txt");
  REQUIRE(files.size() >= 20);
  for (const fs::path& path : files) {
    CAPTURE(path.filename().string());
    const GoldenCase c = read_case(path);
    REQUIRE_MESSAGE(c.sections.count("graph"), path << ": no graph section");
    REQUIRE_MESSAGE(c.sections.count("expect") + c.sections.count("error") == 1,
                    path << ": give exactly one of 'expect:' and 'error:'");
    GraphModule gm;
    gm.graph = graph_from(c, "graph", path);
    const Status input_valid = lint(gm);
    REQUIRE_MESSAGE(input_valid.is_ok(), path.filename() << ": the input graph: " << input_valid.message());
    const std::string before = to_graph_text(gm.graph);
    const std::optional<std::string> error = run(c, gm, path);
    const std::string after = to_graph_text(gm.graph);
    CHECK_FALSE(gm.graph.in_transaction());
    if (c.sections.count("error")) {
      std::string expected = c.sections.at("error");
      while (!expected.empty() && expected.back() == '\n') expected.pop_back();
      CHECK_MESSAGE(error.has_value(), path.filename() << ": expected an error, the rewrite gave:\n" << after);
      if (error) CHECK(*error == expected);
      CHECK_MESSAGE(after == before, path.filename() << ": a failed rewrite changed the graph");
      continue;
    }
    REQUIRE_MESSAGE(!error.has_value(), path.filename() << ": " << error.value_or(""));
    const std::string expected = to_graph_text(graph_from(c, "expect", path));
    CHECK_MESSAGE(after == expected, path.filename() << ": expected\n" << expected << "got\n" << after);
    const Status valid = lint(gm);
    CHECK_MESSAGE(valid.is_ok(), path.filename() << ": " << valid.message());
  }
}
