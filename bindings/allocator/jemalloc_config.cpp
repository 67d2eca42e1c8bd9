// graft's own programs (the command line, the benchmarks, the tests) allocate through jemalloc
// with transparent huge pages. Loading a one-million-node graph makes a few hundred megabytes
// of small objects (names, argument lists); with glibc's malloc they cost 57,000 first-touch
// page faults, each an exit to the hypervisor on a VM, about a third of the load's CPU time.
// On huge pages they are about 6,000 (bench/README.md has the figures).
// Libraries never choose the process's allocator: a host that embeds graft keeps its own.
#include <jemalloc/jemalloc.h>

// One arena: a graph's nodes are allocated on the loader's threads, which are new at every
// load, and freed on another. With jemalloc's default of an arena per thread (up to 4 per CPU),
// memory one load freed sat in arenas the next load's threads did not use, and a warm reload
// of 100k nodes took 0.062-0.071 s instead of 0.050 s (a cold 1M load is the same either way).
// Read by jemalloc when it starts (its documented configuration hook; MALLOC_CONF in the
// environment still overrides it).
const char* malloc_conf = "thp:always,metadata_thp:auto,narenas:1";
