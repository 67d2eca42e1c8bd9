#include "process_memory.hpp"

#include <fmt/core.h>
#include <malloc.h>
#include <sys/types.h>

#include <cstdlib>
#include <fstream>
#include <string>

#ifdef GRAFT_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

namespace graft::bench {

long proc_status_kb(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::string(field).size()));
  return -1;
}
void reset_peak() { std::ofstream("/proc/self/clear_refs") << "5"; }

void return_freed_memory() {
#ifdef GRAFT_JEMALLOC
  std::string purge = fmt::format("arena.{}.purge", MALLCTL_ARENAS_ALL);
  if (mallctl(purge.c_str(), nullptr, nullptr, nullptr, 0) != 0) std::abort();
#else
  ::malloc_trim(0);
#endif
}

void keep_freed_memory() {
#ifdef GRAFT_JEMALLOC
  ssize_t never = -1;
  for (const char* key : {"arenas.dirty_decay_ms", "arenas.muzzy_decay_ms"})  // arenas made later
    if (mallctl(key, nullptr, nullptr, &never, sizeof never) != 0) std::abort();
  unsigned arenas = 0;
  std::size_t size = sizeof arenas;
  if (mallctl("arenas.narenas", &arenas, &size, nullptr, 0) != 0) std::abort();
  for (unsigned i = 0; i < arenas; ++i)  // arenas that exist (the others refuse, and need not)
    for (const char* kind : {"dirty", "muzzy"})
      (void)mallctl(fmt::format("arena.{}.{}_decay_ms", i, kind).c_str(), nullptr, nullptr, &never, sizeof never);
#else
  ::mallopt(M_MMAP_THRESHOLD, 1 << 30);
  ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

}  // namespace graft::bench
