// File reading and atomic replacement.
#include "graft/io/atomic_file.hpp"

#include <cerrno>
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

Status write_file_atomic(const std::string& path, std::string_view content) {
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return Status::error(Diagnostic{.file = path, .message = std::string("cannot create a temporary file: ") + std::strerror(errno)});
  // mkstemp makes the file 0600; give it the mode the old file had, or what umask allows.
  struct stat old {};
  mode_t mode;
  if (::stat(path.c_str(), &old) == 0) {
    mode = old.st_mode & 07777;
  } else {
    mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  ::fchmod(fd, mode);
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
  if (::fsync(fd) != 0 || ::close(fd) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return Status::error(Diagnostic{.file = path, .message = std::string("cannot write: ") + std::strerror(err)});
  }
  return Status::ok();
}

}  // namespace graft
