// Test hooks of the graph file readers (tests and the fuzz targets include engine/src): the
// threaded path's threshold and counters of which path a load took.
#pragma once

#include <cstddef>
#include <cstdint>

namespace graft {

namespace detail {
/// Canonical files of at least this many bytes (default 4 MiB) are read on four threads:
/// module table, two node parsers, graph building (files on disk are streamed, not read whole).
/// Tests lower it to run that path on small files. Returns the previous value.
std::size_t set_parallel_load_threshold(std::size_t bytes);
/// How many loads so far took the threaded path (tests check that they ran it).
std::size_t threaded_loads();
/// How many file loads so far were read with their node lines streamed from the file instead
/// of reading it whole first (canonical files past the threshold above; a file found not to be
/// canonical on the way is read whole after all, and not counted).
std::size_t streamed_loads();
/// Tests only: streamed reads that start at or after `bytes` find the end of the file, as if
/// another process cut it there after the earlier reads (the whole-file read is not affected).
/// Returns the previous value.
std::uint64_t set_stream_read_limit(std::uint64_t bytes);
}  // namespace detail

}  // namespace graft
