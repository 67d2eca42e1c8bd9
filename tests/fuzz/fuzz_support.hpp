// What the fuzz targets share: failing loudly (libFuzzer keeps the input that aborted) and
// loading the fixed graphs they start from.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include "graft/io/graph_json.hpp"

namespace graft::fuzz {

/// Reports a broken promise and aborts, so that libFuzzer saves the input.
[[noreturn]] inline void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz target: %s\n%s\n", what, detail.c_str());
  std::abort();
}

/// A graph file the target embeds; it must load.
inline GraphModule fixed_graph(std::string_view text) {
  Result<GraphModule> gm = parse_graph_json(text, "<fixed graph>");
  if (!gm) fail("the fixed graph does not load", gm.status().message());
  return std::move(gm).value();
}

}  // namespace graft::fuzz
