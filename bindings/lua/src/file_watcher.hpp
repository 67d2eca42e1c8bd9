// FileWatcher: tells whether watched files changed. The truth is always a stat + content hash
// comparison (portable, deterministic in tests); inotify on the files' directories only wakes
// a waiting thread early. Directories, not files, are watched because editors save by writing
// a temporary file and renaming it over the old one, which drops a per-file watch.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace graft::lua::detail {

/// What a file looked like: stat fields plus a hash of its bytes.
struct FileStamp {
  bool exists = false;
  std::uintmax_t size = 0;
  std::int64_t mtime_ns = 0;
  std::uint64_t inode = 0;
  std::uint64_t hash = 0;
  bool same_content(const FileStamp& o) const { return exists == o.exists && hash == o.hash && size == o.size; }
};

/// Stats and hashes `path` (FNV-1a over its bytes).
FileStamp stamp_file(const std::filesystem::path& path);

class FileWatcher {
 public:
  explicit FileWatcher(bool use_inotify);
  ~FileWatcher();
  FileWatcher(const FileWatcher&) = delete;
  FileWatcher& operator=(const FileWatcher&) = delete;

  /// Watches the directories of `files` (idempotent).
  void watch(const std::vector<std::filesystem::path>& files);
  /// Waits until something in a watched directory changes or `timeout` passes; true if
  /// something happened. Without inotify, sleeps `poll_interval` steps and returns true
  /// (the caller compares stamps).
  bool wait(std::chrono::milliseconds timeout, std::chrono::milliseconds poll_interval);
  bool using_inotify() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
  std::set<std::string> directories_;
};

}  // namespace graft::lua::detail
