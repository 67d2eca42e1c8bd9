// SmallVector against std::vector: the same operations must leave the same items, in place
// up to N and on the heap past it.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "graft/ir/graph.hpp"
#include "graft/ir/lint.hpp"
#include "graft/ir/meta.hpp"
#include "graft/ir/small_vector.hpp"

using namespace graft;

namespace {

using Small4 = SmallVector<std::uint32_t, 4>;

bool same(const Small4& s, const std::vector<std::uint32_t>& v) {
  return s == v && s.size() == v.size() && (v.empty() || s.front() == v.front()) && (v.empty() || s.back() == v.back());
}

}  // namespace

TEST_CASE("small vector: random edits give what std::vector gives") {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    Small4 s;
    std::vector<std::uint32_t> v;
    for (int step = 0; step < 60; ++step) {
      std::uint32_t x = rng() % 1000;
      switch (rng() % 7) {
        case 0:
        case 1:
          s.push_back(x);
          v.push_back(x);
          break;
        case 2:
          if (!v.empty()) {
            std::size_t at = rng() % (v.size() + 1);
            s.insert(s.begin() + at, x);
            v.insert(v.begin() + static_cast<std::ptrdiff_t>(at), x);
          }
          break;
        case 3:
          if (!v.empty()) {
            std::size_t at = rng() % v.size();
            s.erase(s.begin() + at);
            v.erase(v.begin() + static_cast<std::ptrdiff_t>(at));
          }
          break;
        case 4:
          if (!v.empty()) {
            s.pop_back();
            v.pop_back();
          }
          break;
        case 5: {
          std::size_t n = rng() % 12;
          s.resize(n, x);
          v.resize(n, x);
          break;
        }
        case 6: {
          Small4 copy = s;  // copies and moves keep the items, inline or on the heap
          Small4 moved = std::move(copy);
          CHECK(copy.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is what is tested
          s = moved;
          break;
        }
      }
      REQUIRE(same(s, v));
    }
  }
}

TEST_CASE("small vector: in place up to N, on the heap past it, and growing from its own item") {
  Small4 s{1, 2, 3, 4};
  CHECK(s.capacity() == 4);
  const std::uint32_t* inline_items = s.data();
  CHECK(reinterpret_cast<const char*>(inline_items) >= reinterpret_cast<const char*>(&s));
  CHECK(reinterpret_cast<const char*>(inline_items) < reinterpret_cast<const char*>(&s) + sizeof(s));
  s.push_back(s[0]);  // the item being copied lives in the storage that growing replaces
  CHECK(s == std::vector<std::uint32_t>{1, 2, 3, 4, 1});
  CHECK(s.capacity() > 4);
  s.insert(s.begin(), s.back());
  CHECK(s == std::vector<std::uint32_t>{1, 1, 2, 3, 4, 1});
  s.erase(s.begin() + 1, s.begin() + 4);
  CHECK(s == std::vector<std::uint32_t>{1, 4, 1});

  Small4 heap(10, 9);
  Small4 other{5};
  other = std::move(heap);  // takes the heap block over
  CHECK(other == std::vector<std::uint32_t>(10, 9));
  CHECK(heap.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is what is tested
  CHECK(heap.capacity() == 4);
  heap.push_back(3);
  CHECK(heap == std::vector<std::uint32_t>{3});
  CHECK(sizeof(Small4) == 24);  // as small as the std::vector it replaces
  CHECK(sizeof(Dims) == 40);
}

TEST_CASE("small vector: a node with more users than fit in place keeps them in order") {
  Graph g;
  NodeId x = g.placeholder("x");
  std::vector<NodeId> users;
  users.reserve(9);
  for (int i = 0; i < 9; ++i) users.push_back(g.create_node(OpKind::CallFunction, "torch.relu", {Argument::node(x)}));
  CHECK(g.users(x) == users);
  // Erasing from the middle and the front keeps the order of the rest.
  REQUIRE(g.erase_node(users[4]).is_ok());
  REQUIRE(g.erase_node(users[0]).is_ok());
  users.erase(users.begin() + 4);
  users.erase(users.begin());
  CHECK(g.users(x) == users);
  g.output(Argument::node(users.back()));
  CHECK(lint(g).is_ok());

  TensorMeta t;
  t.shape = {1, 12, 197, 64, 2};  // past four dims: on the heap, still equal by value
  TensorMeta copy = t;
  CHECK(copy == t);
  CHECK(copy.shape.size() == 5);
  CHECK(copy.shape[4] == Dim(2));
}
