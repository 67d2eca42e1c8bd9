// File reading and atomic replacement.
#include "graft/io/atomic_file.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace graft {

Result<std::string> read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status::error(Diagnostic{.file = path, .message = std::string("cannot open: ") + std::strerror(errno)});
  std::string data;
  char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.append(buf, n);
  bool failed = std::ferror(f);
  std::fclose(f);
  if (failed) return Status::error(Diagnostic{.file = path, .message = "read error"});
  return data;
}

namespace {

// Creates a new temporary file beside `path` with O_EXCL and mode 0666, so the kernel applies
// the umask (no umask() call, which would race with other threads).
int create_temp(const std::string& path, std::string& tmp) {
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    unsigned long tag = static_cast<unsigned long>(::getpid()) * 1000003ul +
                        static_cast<unsigned long>(std::chrono::steady_clock::now().time_since_epoch().count()) +
                        counter.fetch_add(1);
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".tmp.%08lx", tag & 0xfffffffful);
    tmp = path + suffix;
    int fd = ::open(tmp.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

}  // namespace

Status write_file_atomic(const std::string& path, std::string_view content) {
  std::string tmp;
  int fd = create_temp(path, tmp);
  if (fd < 0) return Status::error(Diagnostic{.file = path, .message = std::string("cannot create a temporary file: ") + std::strerror(errno)});
  // Replacing a file keeps its permission bits; a new file gets what the umask allows.
  struct stat old {};
  if (::stat(path.c_str(), &old) == 0) ::fchmod(fd, old.st_mode & 0777);
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return Status::error(Diagnostic{.file = path, .message = std::string("write failed: ") + std::strerror(err)});
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  // fsync before rename: after a crash the file is the old one or the whole new one.
  int err = ::fsync(fd) == 0 ? 0 : errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    return Status::error(Diagnostic{.file = path, .message = std::string("cannot write: ") + std::strerror(err)});
  }
  return Status::ok();
}

}  // namespace graft
