// `graft`: inspect, check, draw and re-save graph files; run Lua pipelines and passes on them.
// Each subcommand is its own NAME_command.cpp (the list: commands.cpp); this file parses the
// command line, checks the files the chosen one reads and writes, and runs it.
#include <fmt/core.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

#include <sys/mman.h>

#include "command.hpp"
#include "graft/status.hpp"
#include "output_paths.hpp"
#include "print_error.hpp"

namespace {

using namespace graft;

using cli::kExitError;
using cli::kExitUsage;
using cli::print_error;

int run_command_line(int argc, char** argv) {
  CLI::App app{
      "graft: a graph rewrite engine for ML computation graphs.\n"
      "Graph files are JSON (docs/FORMAT.md); export them from PyTorch with `python3 -m graft_fx export`."};
  app.require_subcommand(1);
  app.footer(
      "Outputs (-o, --report): a regular file is replaced atomically (a temporary file beside it, then a\n"
      "rename; its mode is kept), so a failed run leaves the old file whole; a symbolic link is followed and\n"
      "its target replaced the same way; a device or FIFO is written into directly; '-' is stdout.");
  app.set_version_flag("--version", "graft 0.1.0");
  const std::vector<std::unique_ptr<cli::Command>> commands = cli::declare_commands(app);

  // An unknown command is named as such (CLI11 would say "A subcommand is required", and
  // `graft frobnicate --help` would print the main help and exit 0).
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      fmt::print(stderr, "graft: unknown command {} (commands: {}; graft --help describes them)\n",
                 quoted_text(argv[1]), names);
      return kExitUsage;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }
  const auto chosen = std::find_if(commands.begin(), commands.end(), [](const auto& c) { return c->chosen(); });
  if (chosen == commands.end()) return kExitUsage;
  cli::Command& command = **chosen;

  // Every file the command will write, checked before any work: a folder, a missing folder or
  // an unwritable place fails now, not after a long run; so do two outputs that are one file
  // (the later would replace the earlier) and an output over an input (cli/output_paths.hpp).
  std::vector<cli::PathUse> outputs, inputs;
  command.paths(outputs, inputs);
  if (std::count_if(outputs.begin(), outputs.end(), [](const cli::PathUse& o) { return o.path == "-"; }) +
          (command.json_to_stdout() ? 1 : 0) >
      1) {
    print_error("only one output can go to stdout ('-')");
    return kExitUsage;
  }
  if (Status s = cli::check_output_paths(outputs, inputs); !s) {
    print_error(s.message());
    return s.diagnostic().file.empty() ? kExitUsage : kExitError;  // a clash of options, or a bad place
  }
  return command.run();
}

}  // namespace

namespace {

constexpr char kOutOfMemory[] = "graft: error: out of memory\n";

/// Address space held back for the way out. When an allocation fails, the new-handler gives it
/// back and throws std::bad_alloc: the destructors that run while the error unwinds to main
/// (some allocate: nlohmann::json's destroys nested values through a stack) then find memory
/// under an address-space limit (`ulimit -v`), where their failure would end the process in
/// std::terminate (exit 134). Mapped without access, so it costs no memory.
void* g_reserve = nullptr;
constexpr std::size_t kReserveBytes = std::size_t{64} << 20;

void release_reserve() {
  if (g_reserve != nullptr) munmap(g_reserve, kReserveBytes);
  g_reserve = nullptr;
  throw std::bad_alloc();
}

/// The last resort, for a std::bad_alloc thrown where no handler can catch it (a destructor, a
/// worker thread): the same message and exit status as main's.
[[noreturn]] void on_terminate() {
  if (const std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      std::fputs(kOutOfMemory, stderr);
      std::_Exit(kExitError);
    } catch (const std::exception& other) {
      std::fprintf(stderr, "graft: internal error: uncaught exception: %s\n", other.what());
    } catch (...) { std::fputs("graft: internal error: uncaught exception\n", stderr); }
  }
  std::abort();
}

}  // namespace

int main(int argc, char** argv) {
  // Whatever is thrown past the commands (out of memory, a file system error) ends as an error
  // message and exit 1, never as an abort.
  std::set_terminate(on_terminate);
  g_reserve = mmap(nullptr, kReserveBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (g_reserve == MAP_FAILED) g_reserve = nullptr;
  std::set_new_handler(release_reserve);
  try {
    return run_command_line(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fputs(kOutOfMemory, stderr);
    return kExitError;
  } catch (const std::exception& e) {
    print_error(e.what());
    return kExitError;
  }
}
