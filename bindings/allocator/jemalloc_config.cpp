// graft's own programs (the command line, the benchmarks, the tests) allocate through jemalloc
// with transparent huge pages: a large load makes hundreds of megabytes of small objects, and on
// 4 KiB pages their first-touch page faults dominate (bench/README.md has the figures).
// Libraries never choose the process's allocator: a host that embeds graft keeps its own.
#include <jemalloc/jemalloc.h>

// One arena: a graph's nodes are allocated on the loader's threads, which are new at every
// load, and freed on another; with an arena per thread, memory one load freed would sit in
// arenas the next load's threads do not use.
// Read by jemalloc when it starts (its documented configuration hook; MALLOC_CONF in the
// environment still overrides it).
const char* malloc_conf = "thp:always,metadata_thp:auto,narenas:1";
