// FileBuffer and huge-page advice (Linux; harmless where the advice is unsupported).
#include "io/file_buffer.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace graft::detail {

FileBuffer::~FileBuffer() {
  if (data_) ::munmap(data_, mapped_);
}

Status FileBuffer::read(const std::string& path, std::size_t padding) {
  auto fail = [&](const char* what) {
    return Status::error(Diagnostic{.file = path, .message = std::string(what) + ": " + std::strerror(errno)});
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail("cannot open");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    errno = err;
    return fail("cannot read");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::error(Diagnostic{.file = path, .message = S_ISDIR(st.st_mode) ? "is a directory, not a graph file" : "not a regular file"});
  }
  std::size_t size = static_cast<std::size_t>(st.st_size);
  mapped_ = size + padding;
  void* p = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    ::close(fd);
    mapped_ = 0;
    return fail("cannot allocate memory for");
  }
  data_ = static_cast<char*>(p);
  advise_huge_pages(data_, mapped_);
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, data_ + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the file shrank under us: parse what we have
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  size_ = done;  // anonymous pages are zero: the padding already is
  return Status::ok();
}

}  // namespace graft::detail
