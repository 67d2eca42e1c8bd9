// Pieces for caches that const methods fill on first use, so that readers on several threads
// can share one object: the flag is read without a lock, the fill happens under the mutex.
// Copying an object copies the flag's value and starts a fresh mutex.
#pragma once

#include <atomic>
#include <mutex>

namespace graft::detail {

class CacheFlag {
 public:
  CacheFlag() = default;
  CacheFlag(const CacheFlag& o) : valid_(o.get()) {}
  CacheFlag& operator=(const CacheFlag& o) {
    set(o.get());
    return *this;
  }
  bool get() const { return valid_.load(std::memory_order_acquire); }
  void set(bool valid) { valid_.store(valid, std::memory_order_release); }

 private:
  std::atomic<bool> valid_{false};
};

struct CacheMutex {
  CacheMutex() = default;
  CacheMutex(const CacheMutex&) {}
  CacheMutex& operator=(const CacheMutex&) { return *this; }
  std::mutex mutex;
};

}  // namespace graft::detail
