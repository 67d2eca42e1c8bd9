// A subcommand of `graft`, each in its own file (NAME_command.cpp): it declares its options on
// the app, names the files it reads and writes (checked before any work), and runs.
#pragma once

#include <memory>
#include <vector>

#include <CLI/CLI.hpp>

#include "output_paths.hpp"

namespace graft::cli {

inline constexpr int kExitUsage = 2;

class Command {
 public:
  virtual ~Command() = default;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;

  [[nodiscard]] bool chosen() const { return app_->parsed(); }
  /// The files it reads and writes, for check_output_paths.
  virtual void paths(std::vector<PathUse>& /*outputs*/, std::vector<PathUse>& /*inputs*/) const {}
  /// True when it prints JSON on stdout (then no output file may be '-').
  [[nodiscard]] virtual bool json_to_stdout() const { return false; }
  /// Runs it; returns the exit status.
  [[nodiscard]] virtual int run() = 0;

 protected:
  explicit Command(CLI::App* app) : app_(app) {}
  [[nodiscard]] CLI::App& app() const { return *app_; }

 private:
  CLI::App* app_;
};

/// Declares every subcommand on `app`, in the order `graft --help` lists them.
std::vector<std::unique_ptr<Command>> declare_commands(CLI::App& app);

}  // namespace graft::cli
