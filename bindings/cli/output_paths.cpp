// The files a command reads and writes, checked against each other before any work.
#include "output_paths.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <optional>
#include <utility>

#include <fmt/core.h>

#include "graft/io/atomic_file.hpp"

namespace graft::cli {
namespace {

/// Which file a path is: its device and inode, or for a file not yet made, its folder's and its
/// name (the folder found through any spelling or link).
using FileKey = std::pair<std::pair<dev_t, ino_t>, std::string>;

std::optional<FileKey> key_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return FileKey{{st.st_dev, st.st_ino}, {}};
  const std::filesystem::path p(path);
  const std::filesystem::path folder = p.parent_path().empty() ? "." : p.parent_path();
  if (::stat(folder.c_str(), &st) != 0) return std::nullopt;
  return FileKey{{st.st_dev, st.st_ino}, p.filename().string()};
}

}  // namespace

Status check_output_paths(const std::vector<PathUse>& outputs, const std::vector<PathUse>& inputs) {
  struct Written {
    const PathUse* use;
    FileKey key;
  };
  std::vector<Written> written;
  for (const PathUse& o : outputs) {
    Result<OutputPath> checked = check_output_path(o.path);
    if (!checked) return checked.status();
    if (checked->kind != OutputPath::Kind::ReplaceFile) continue;  // stdout, a device, a FIFO
    std::optional<FileKey> key = key_of(checked->path);
    if (!key) continue;  // cannot happen after the check (its folder exists); nothing to compare
    for (const Written& w : written)
      if (w.key == *key)
        return Status::error(fmt::format("{} and {} name the same file ({} and {}): one would replace the other",
                                         w.use->option, o.option, quoted_text(w.use->path), quoted_text(o.path)));
    for (const PathUse& in : inputs) {
      if (in.path.empty() || in.path == "-" || (o.graph && in.graph)) continue;
      if (std::optional<FileKey> k = key_of(in.path); k && k->second.empty() && *k == *key)
        return Status::error(fmt::format("{} {} is the {} file {}: writing it would destroy the input", o.option,
                                         quoted_text(o.path), in.option, quoted_text(in.path)));
    }
    written.push_back({&o, *key});
  }
  return Status::ok();
}

}  // namespace graft::cli
