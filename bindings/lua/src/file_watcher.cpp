// FileWatcher: stat + hash as the truth, inotify as the alarm clock.
#include "file_watcher.hpp"

#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <fstream>
#include <thread>

namespace graft::lua::detail {

FileStamp stamp_file(const std::filesystem::path& path) {
  FileStamp s;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return s;
  s.exists = true;
  s.size = static_cast<std::uintmax_t>(st.st_size);
  s.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  s.inode = static_cast<std::uint64_t>(st.st_ino);
  std::ifstream in(path, std::ios::binary);
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  std::array<char, 1 << 14> buf{};
  while (in) {
    in.read(buf.data(), buf.size());
    const auto n = in.gcount();
    for (std::streamsize i = 0; i < n; ++i) {
      h ^= static_cast<unsigned char>(buf[static_cast<std::size_t>(i)]);
      h *= 1099511628211ull;
    }
  }
  s.hash = h;
  return s;
}

FileWatcher::FileWatcher(bool use_inotify) {
  if (use_inotify) fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
}

FileWatcher::~FileWatcher() {
  if (fd_ >= 0) ::close(fd_);
}

void FileWatcher::watch(const std::vector<std::filesystem::path>& files) {
  if (fd_ < 0) return;
  for (const auto& f : files) {
    std::filesystem::path dir = f.parent_path();
    if (dir.empty()) dir = ".";
    const std::string key = dir.string();
    if (directories_.count(key)) continue;
    const int wd = ::inotify_add_watch(fd_, key.c_str(),
                                       IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MODIFY);
    if (wd >= 0) directories_.insert(key);
  }
}

bool FileWatcher::wait(std::chrono::milliseconds timeout, std::chrono::milliseconds poll_interval) {
  if (fd_ < 0) {
    std::this_thread::sleep_for(std::min(timeout, poll_interval));
    return true;
  }
  pollfd p{fd_, POLLIN, 0};
  const int rc = ::poll(&p, 1, static_cast<int>(timeout.count()));
  if (rc <= 0) return false;
  // Drain the queue; the events themselves do not matter (stamps decide). An overflow
  // (IN_Q_OVERFLOW) lands here too and simply means "look at everything".
  alignas(inotify_event) std::array<char, 8192> buf{};
  while (::read(fd_, buf.data(), buf.size()) > 0) {}
  return true;
}

}  // namespace graft::lua::detail
