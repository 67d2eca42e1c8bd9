// graft's programs run on jemalloc with huge pages (bindings/allocator): check that the
// configuration string is the one jemalloc took, not silently rejected.
#include <doctest/doctest.h>
#include <jemalloc/jemalloc.h>

#include <cstdlib>
#include <memory>
#include <string>

namespace {

std::string option_text(const char* name) {
  const char* value = nullptr;
  std::size_t size = sizeof(value);
  if (mallctl(name, &value, &size, nullptr, 0) != 0 || value == nullptr) return "(unavailable)";
  return value;
}

}  // namespace

TEST_CASE("allocator: the test binary runs on jemalloc with transparent huge pages") {
  // MALLOC_CONF in the environment would override the built-in string: the check is about the latter.
  if (std::getenv("MALLOC_CONF") == nullptr) {
    CHECK(option_text("opt.thp") == "always");
    CHECK(option_text("opt.metadata_thp") == "auto");
  }
  CHECK(std::string(option_text("version")).rfind("5.", 0) == 0);
  // malloc itself is jemalloc's: a block it hands out is one it knows the size of.
  auto block = std::unique_ptr<char, decltype(&std::free)>(static_cast<char*>(std::malloc(100)), &std::free);
  REQUIRE(block);
  CHECK(malloc_usable_size(block.get()) >= 100);
  std::size_t allocated = 0, size = sizeof(allocated), epoch = 1;
  CHECK(mallctl("epoch", nullptr, nullptr, &epoch, sizeof(epoch)) == 0);
  CHECK(mallctl("stats.allocated", &allocated, &size, nullptr, 0) == 0);
  CHECK(allocated >= 100);
}
