// FileBuffer: a whole file in memory with zeroed padding after it (simdjson reads past the
// end), in pages the kernel may back with transparent huge pages: fewer page faults, which are
// expensive on virtual machines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "graft/status.hpp"
#include "ir/memory.hpp"

namespace graft::detail {

/// Reads up to `count` bytes at `offset` of the open file `fd` into `out` (retrying short and
/// interrupted reads); returns how many it got: fewer at the end of the file or on an error.
std::size_t read_range(int fd, char* out, std::uint64_t offset, std::size_t count);

class FileBuffer {
 public:
  FileBuffer() = default;
  FileBuffer(const FileBuffer&) = delete;
  FileBuffer& operator=(const FileBuffer&) = delete;
  ~FileBuffer();

  /// Reads `path`; `padding` zero bytes follow the content.
  Status read(const std::string& path, std::size_t padding);
  const char* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t mapped_ = 0;
};

}  // namespace graft::detail
