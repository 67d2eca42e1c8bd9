// libFuzzer target: graph file bytes through both readers (the whole-document walk and the
// line-by-line canonical path on its threads). Whatever the bytes, both readers agree, and a
// load either fails with a message or gives a graph that lints without crashing, saves, and
// loads back to the same text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/ir/lint.hpp"
#include "io/load_hooks.hpp"

namespace {

using graft::fuzz::fail;

void check_round_trip(const graft::GraphModule& gm) {
  (void)lint(gm);  // a loaded graph may break an invariant (graft lint reports it); it must not crash
  graft::Result<std::string> text = graft::to_graph_json(gm);
  if (!text) fail("a loaded graph cannot be saved", text.status().message());
  graft::Result<graft::GraphModule> again = graft::parse_graph_json(text.value(), "<saved>");
  if (!again) fail("a saved graph does not load", again.status().message() + "\n" + text.value());
  graft::Result<std::string> text2 = graft::to_graph_json(again.value());
  if (!text2 || text2.value() != text.value()) fail("save -> load -> save changed the text", text.value());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Both paths on every input: the whole-document walk, then the threaded canonical path
  // forced on (a file that is not canonical falls back to the walk). They must agree.
  graft::detail::set_parallel_load_threshold(std::size_t{1} << 40);
  graft::Result<graft::GraphModule> whole = graft::parse_graph_json(text, "<fuzz>");
  graft::detail::set_parallel_load_threshold(1);
  graft::Result<graft::GraphModule> threaded = graft::parse_graph_json(text, "<fuzz>");
  if (whole.is_ok() != threaded.is_ok())
    fail("the two readers disagree on whether the file loads",
         whole ? threaded.status().message() : whole.status().message());
  if (!whole) {
    if (whole.status().message().empty()) fail("a failed load has no message", std::string(text));
    if (whole.status().message() != threaded.status().message())
      fail("the two readers give different errors", whole.status().message() + "\n" + threaded.status().message());
    return 0;
  }
  check_round_trip(whole.value());
  if (graft::to_graph_json(whole.value()).value() != graft::to_graph_json(threaded.value()).value())
    fail("the two readers load different graphs", std::string(text));
  return 0;
}
