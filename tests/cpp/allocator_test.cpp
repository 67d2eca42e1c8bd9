// graft's programs run on jemalloc with huge pages (bindings/allocator): check that the
// configuration string is the one jemalloc took, not silently rejected.
#include <doctest/doctest.h>
#include <jemalloc/jemalloc.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

namespace {

std::string option_text(const char* name) {
  const char* value = nullptr;
  std::size_t size = sizeof(value);
  if (mallctl(name, &value, &size, nullptr, 0) != 0 || value == nullptr) return "(unavailable)";
  return value;
}

// Whether the kernel offers transparent huge pages (jemalloc reads the same file when it starts).
bool kernel_has_thp() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  return std::getline(f, modes) && modes.find('[') != std::string::npos;
}

}  // namespace

TEST_CASE("allocator: the test binary runs on jemalloc with transparent huge pages") {
  // MALLOC_CONF in the environment would override the built-in string: the check is about the latter.
  if (std::getenv("MALLOC_CONF") == nullptr) {
    // metadata_thp's default is "disabled": "auto" shows that the string was read, on any kernel.
    CHECK(option_text("opt.metadata_thp") == "auto");
    // Without the kernel's huge pages (a container without that part of /sys) jemalloc says so.
    CHECK(option_text("opt.thp") == (kernel_has_thp() ? "always" : "not supported"));
    unsigned arenas = 0;
    std::size_t size = sizeof(arenas);
    CHECK(mallctl("opt.narenas", &arenas, &size, nullptr, 0) == 0);
    CHECK(arenas == 1);
  }
  CHECK(std::string(option_text("version")).rfind("5.", 0) == 0);
  // malloc itself is jemalloc's: a block it hands out is one it knows the size of.
  auto release = [](char* p) { std::free(p); };
  auto block = std::unique_ptr<char, decltype(release)>(static_cast<char*>(std::malloc(100)), release);
  REQUIRE(block);
  CHECK(malloc_usable_size(block.get()) >= 100);
  std::size_t allocated = 0, size = sizeof(allocated);
  std::uint64_t epoch = 1;
  CHECK(mallctl("epoch", nullptr, nullptr, &epoch, sizeof(epoch)) == 0);
  CHECK(mallctl("stats.allocated", &allocated, &size, nullptr, 0) == 0);
  CHECK(allocated >= 100);
}
