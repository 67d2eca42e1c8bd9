// UserList against a plain vector model: the same users in the same order after any sequence
// of adds and removes, across the switch to an index and back.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "graft/ir/user_list.hpp"

using graft::NodeId;
using graft::UserList;

namespace {

void add_to_model(std::vector<NodeId>& model, NodeId u) {
  if (std::find(model.begin(), model.end(), u) == model.end()) model.push_back(u);
}

void remove_from_model(std::vector<NodeId>& model, NodeId u) {
  auto it = std::find(model.begin(), model.end(), u);
  if (it != model.end()) model.erase(it);
}

}  // namespace

TEST_CASE("user list: adds and removes in any order keep insertion order, as a vector would") {
  for (unsigned seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    const NodeId universe = seed % 2 ? 24 : 400;  // lists that stay small, and lists that get indexed
    UserList list;
    std::vector<NodeId> model;
    for (int step = 0; step < 3000; ++step) {
      const NodeId u = static_cast<NodeId>(rng() % universe);
      if (rng() % 3 != 0) {
        list.add(u);
        add_to_model(model, u);
      } else {
        list.remove(u);
        remove_from_model(model, u);
      }
      if (step % 97 == 0) {
        UserList copy = list;  // copies keep their own index
        copy.remove(model.empty() ? 0 : model.front());
        list = UserList(list);
      }
      REQUIRE_MESSAGE(list == model, "seed " << seed << " step " << step);
      REQUIRE(list.contains(u) == (std::find(model.begin(), model.end(), u) != model.end()));
      if (!model.empty()) REQUIRE(list.front() == model.front());
    }
  }
}

TEST_CASE("user list: removing every user of a 100k-user list, oldest first, empties it") {
  UserList list;
  for (NodeId u = 0; u < 100000; ++u) list.add(u);
  CHECK(list.size() == 100000);
  for (NodeId u = 0; u < 100000; ++u) {
    list.remove(u);
    if (u == 49999) CHECK(list.front() == 50000);
  }
  CHECK(list.empty());
  CHECK(list.begin() == list.end());
  list.add(7);
  CHECK(list == std::vector<NodeId>{7});
}
