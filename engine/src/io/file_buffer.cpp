// FileBuffer and huge-page advice (Linux; harmless where the advice is unsupported).
#include "io/file_buffer.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <system_error>
#include <thread>

namespace graft::detail {

namespace {

constexpr std::size_t kSplitReadBytes = std::size_t{64} << 20;

}  // namespace

std::size_t read_range(int fd, char* out, std::uint64_t offset, std::size_t count) {
  std::size_t done = 0;
  while (done < count) {
    ssize_t n = ::pread(fd, out + done, count - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

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
    return Status::error(Diagnostic{
        .file = path, .message = S_ISDIR(st.st_mode) ? "is a directory, not a graph file" : "not a regular file"});
  }
  std::size_t size = static_cast<std::size_t>(st.st_size);
  mapped_ = size + padding;
  void* p = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    ::close(fd);
    mapped_ = 0;
    return Status::error(Diagnostic{.file = path, .message = fmt::format("out of memory for its {} bytes", size)});
  }
  data_ = static_cast<char*>(p);
  advise_huge_pages(data_, mapped_);
  // Large files are read in two halves at once: most of a read's cost is the kernel zeroing
  // fresh pages, and the second core is otherwise idle until parsing starts.
  std::size_t half = size >= kSplitReadBytes ? size / 2 : size;
  std::size_t second_done = 0;
  std::jthread second;
  if (half < size) {
    try {
      second = std::jthread([&] { second_done = read_range(fd, data_ + half, half, size - half); });
    } catch (const std::system_error&) {
      half = size;  // no thread to be had: read it all here
    }
  }
  std::size_t done = read_range(fd, data_, 0, half);
  if (second.joinable()) second.join();
  ::close(fd);
  // A file that shrank under us: parse what was read without a gap, and keep the padding zero.
  size_ = done < half ? done : half + second_done;
  if (done < half) std::memset(data_ + done, 0, half + second_done - done);
  // Otherwise anonymous pages are zero: the padding already is.
  return Status::ok();
}

}  // namespace graft::detail
