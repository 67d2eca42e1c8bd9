// How a benchmark process treats freed memory, and what it has resident (Linux, jemalloc or
// glibc malloc).
#pragma once

namespace graft::bench {

/// A field of /proc/self/status in kB (`VmRSS:`, `VmHWM:`), or -1.
long proc_status_kb(const char* field);
/// Restarts the peak resident size (VmHWM) from the current one.
void reset_peak();
/// Hands freed memory back to the system, so that the next allocations touch fresh pages.
void return_freed_memory();
/// Keeps freed memory in the process from now on, as a long-running host's allocator would.
void keep_freed_memory();

}  // namespace graft::bench
