// libFuzzer target: the graph text notation (graft/io/graph_text.hpp). Any bytes either parse or
// give an error naming a line and column; a graph that parses prints back to text that parses
// to the same text again (the notation round-trips), and linting it never crashes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "graft/io/graph_text.hpp"
#include "graft/ir/lint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using graft::fuzz::fail;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  graft::Result<graft::Graph> g = graft::parse_graph_text(text, "fuzz.txt");
  if (!g) {
    const graft::Diagnostic& d = g.status().diagnostic();
    if (d.file != "fuzz.txt" || d.line < 1 || d.column < 1) fail("an error without a place", d.to_string());
    return 0;
  }
  (void)graft::lint(*g);
  const std::string printed = graft::to_graph_text(*g);
  graft::Result<graft::Graph> again = graft::parse_graph_text(printed, "printed.txt");
  if (!again) fail("printed text does not parse", again.status().message() + "\n" + printed);
  if (graft::to_graph_text(*again) != printed) fail("printed text does not print the same", printed);
  return 0;
}
