// Runs Graphviz without a shell (no quoting issues with odd file names).
#include "graphviz.hpp"

#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "graft/io/atomic_file.hpp"

namespace graft::cli {

bool graphviz_available() {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::string_view rest(path);
  while (!rest.empty()) {
    std::size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (!dir.empty() && ::access((dir + "/dot").c_str(), X_OK) == 0) return true;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return false;
}

Status render_svg(const std::string& dot_text, const std::string& svg_path) {
  if (!graphviz_available())
    return Status::error(Diagnostic{
        .file = svg_path,
        .message = "Graphviz 'dot' is not installed (apt-get install graphviz), or write a .dot file instead"});
  // Unique temporary names beside the output, so parallel runs do not clash.
  std::string dot_tmp = svg_path + ".tmp.XXXXXX";
  int dot_fd = ::mkstemp(dot_tmp.data());
  if (dot_fd < 0) return Status::error(Diagnostic{.file = svg_path, .message = "cannot create a temporary file"});
  ::close(dot_fd);
  std::string svg_tmp = dot_tmp + ".svg";
  if (Status s = write_output_file(dot_tmp, dot_text); !s) {
    ::unlink(dot_tmp.c_str());
    return s;
  }
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execlp("dot", "dot", "-Tsvg", dot_tmp.c_str(), "-o", svg_tmp.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ::unlink(dot_tmp.c_str());
    ::unlink(svg_tmp.c_str());
    return Status::error(Diagnostic{.file = svg_path, .message = "Graphviz 'dot' failed to render the graph"});
  }
  ::unlink(dot_tmp.c_str());
  // Through the same rules as every output: a symlink's target, a device, stdout.
  Result<std::string> svg = read_file(svg_tmp);
  ::unlink(svg_tmp.c_str());
  if (!svg) return Status::error(Diagnostic{.file = svg_path, .message = "Graphviz 'dot' wrote no SVG"});
  return write_output_file(svg_path, svg.value());
}

}  // namespace graft::cli
