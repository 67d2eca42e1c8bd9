// File reading and atomic replacement.
#include "graft/io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace graft {

Result<std::string> read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f)
    return Status::error(Diagnostic{.file = path, .message = std::string("cannot open: ") + std::strerror(errno)});
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
        static_cast<unsigned long>(std::chrono::steady_clock::now().time_since_epoch().count()) + counter.fetch_add(1);
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".tmp.%08lx", tag & 0xfffffffful);
    tmp = path + suffix;
    int fd = ::open(tmp.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

Status write_all(int fd, std::string_view content) {
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Status::error(std::string("write failed: ") + std::strerror(errno));
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  return Status::ok();
}

Status replace_file(const std::string& path, std::string_view content) {
  std::string tmp;
  int fd = create_temp(path, tmp);
  if (fd < 0)
    return Status::error(
        Diagnostic{.file = path, .message = std::string("cannot create a temporary file: ") + std::strerror(errno)});
  // Replacing a file keeps its permission bits; a new file gets what the umask allows.
  struct stat old {};
  if (::stat(path.c_str(), &old) == 0) ::fchmod(fd, old.st_mode & 07777);
  if (Status s = write_all(fd, content); !s) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return Status::error(Diagnostic{.file = path, .message = s.message()});
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

Status write_in_place(const std::string& path, std::string_view content) {
  // No O_CREAT: the device or FIFO was there when the path was checked, and must still be.
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return Status::error(
        Diagnostic{.file = path, .message = std::string("cannot open for writing: ") + std::strerror(errno)});
  Status s = write_all(fd, content);
  if (::close(fd) != 0 && s) s = Status::error(std::string("write failed: ") + std::strerror(errno));
  if (!s) return Status::error(Diagnostic{.file = path, .message = s.message()});
  return Status::ok();
}

std::string parent_folder(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

}  // namespace

Result<OutputPath> check_output_path(const std::string& given) {
  if (given == "-") return OutputPath{OutputPath::Kind::Stdout, given};
  auto refuse = [&](const std::string& why) { return Status::error(Diagnostic{.file = given, .message = why}); };
  if (given.empty()) return Status::error("the output path is empty");
  std::string path = given;
  struct stat st {};
  for (int hops = 0;; ++hops) {
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno != ENOENT) return refuse(std::string("cannot inspect the output: ") + std::strerror(errno));
      break;  // a new file (possibly a dangling symlink's target)
    }
    if (!S_ISLNK(st.st_mode)) break;
    if (hops == 40) return refuse("too many levels of symbolic links");
    std::string target(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
    ssize_t len = ::readlink(path.c_str(), target.data(), target.size());
    if (len < 0) return refuse(std::string("cannot read the symbolic link: ") + std::strerror(errno));
    target.resize(static_cast<std::size_t>(len));
    path = target.starts_with('/') ? target : parent_folder(path) + "/" + target;
  }
  const bool exists = ::lstat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode))
    return refuse(path == given ? "is a folder, not a file"
                                : "leads to a folder (" + quoted_text(path) + "), not a file");
  if (exists && !S_ISREG(st.st_mode)) {
    if (::access(path.c_str(), W_OK) != 0) return refuse(std::string("cannot write: ") + std::strerror(errno));
    return OutputPath{OutputPath::Kind::WriteInPlace, path};
  }
  const std::string folder = parent_folder(path);
  struct stat dir {};
  if (::stat(folder.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode))
    return refuse("the folder " + quoted_text(folder) + " does not exist");
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    return refuse("cannot create files in " + quoted_text(folder) + ": " + std::strerror(errno));
  if (exists && ::access(path.c_str(), W_OK) != 0) return refuse("the file is not writable");
  return OutputPath{OutputPath::Kind::ReplaceFile, path};
}

Status write_output_file(const std::string& path, std::string_view content) {
  Result<OutputPath> out = check_output_path(path);
  if (!out) return out.status();
  switch (out->kind) {
    case OutputPath::Kind::Stdout: {
      std::fflush(stdout);
      if (Status s = write_all(STDOUT_FILENO, content); !s)
        return Status::error(Diagnostic{.file = "<stdout>", .message = s.message()});
      return Status::ok();
    }
    case OutputPath::Kind::WriteInPlace: return write_in_place(out->path, content);
    case OutputPath::Kind::ReplaceFile: return replace_file(out->path, content);
  }
  return Status::ok();
}

}  // namespace graft
