#include "verify_command.hpp"
#include "command.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

namespace graft::cli {

namespace {

/// Where the graft Python package is: $GRAFT_PYTHONPATH, else where `cmake --install` put it
/// beside this binary, else the build tree this binary was built in.
std::optional<std::string> graft_python_dir() {
  if (const char* env = std::getenv("GRAFT_PYTHONPATH"); env && *env) return std::string(env);
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto installed = exe.parent_path().parent_path() / GRAFT_PYTHON_INSTALL_DIR;
    if (std::filesystem::exists(installed / "graft" / "__init__.py", ec)) return installed.string();
  }
  const std::filesystem::path build = GRAFT_BUILD_PYTHON_DIR;
  if (std::filesystem::exists(build / "graft" / "__init__.py", ec)) return build.string();
  return std::nullopt;
}

}  // namespace

int cmd_verify(const std::vector<std::string>& args) {
  std::optional<std::string> dir = graft_python_dir();
  if (!dir) {
    fmt::print(stderr,
               "graft: error: verify runs rules in PyTorch through the graft Python module, which is not built "
               "(configure with -DGRAFT_PYTHON_MODULE=ON, or set GRAFT_PYTHONPATH)\n");
    return 1;
  }
  std::string path = *dir;
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) path += std::string(":") + old;
  setenv("PYTHONPATH", path.c_str(), 1);
  const char* python = std::getenv("GRAFT_PYTHON");
  if (python == nullptr || *python == '\0') python = GRAFT_DEFAULT_PYTHON;
  std::vector<std::string> argv_text{python, "-m", "graft", "verify"};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(argv_text.size() + 1);
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  execvp(python, argv.data());  // a bare name (python3) is looked up on PATH
  fmt::print(stderr, "graft: error: cannot run {}: {}\n", python, std::strerror(errno));
  return 1;
}

namespace {

class VerifyCommand final : public Command {
 public:
  explicit VerifyCommand(CLI::App& parent)
      : Command(parent.add_subcommand(
            "verify",
            "Check in PyTorch that each rule of a rule script computes what it replaces, on the graph files it "
            "names (runs python3 -m graft verify; `graft verify --help` lists its options)")) {
    app().prefix_command();  // everything after `verify` goes to Python, --help included
    app().set_help_flag();
  }

  int run() override { return cmd_verify(app().remaining()); }
};

}  // namespace

std::unique_ptr<Command> verify_command(CLI::App& app) { return std::make_unique<VerifyCommand>(app); }

}  // namespace graft::cli
