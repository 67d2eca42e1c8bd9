// Memory hints for large, freshly allocated buffers.
#pragma once

#include <cstddef>

namespace graft::detail {

/// Asks the kernel to back the whole 2 MiB pages inside [p, p+bytes) with transparent huge
/// pages when it is next touched (Linux madvise; a no-op elsewhere). On virtual machines a
/// 4 KiB page fault can cost microseconds, and a million-node graph touches a gigabyte.
void advise_huge_pages(void* p, std::size_t bytes);

}  // namespace graft::detail
