// The capability partitioner, the fusability check and fusing into submodules.
#include <doctest/doctest.h>

#include "graft/analysis.hpp"
#include "graft/io/graph_text.hpp"
#include "graft/ir/lint.hpp"
#include "graft/passes.hpp"
#include "test_graphs.hpp"

namespace graft {
namespace {

using test::module_of_text;

using Names = std::vector<std::vector<std::string>>;

Names names_of(const Graph& g, const std::vector<std::vector<NodeId>>& parts) {
  Names out;
  for (const auto& p : parts) {
    out.emplace_back();
    for (NodeId n : p) out.back().push_back(g.name(n));
  }
  return out;
}

const OperatorSupport kAddMul = OperatorSupport::targets("add_mul", {"torch.add", "torch.mul", "_operator.getitem"});

Names partition(const GraphModule& gm, const PartitionOptions& o = {}, const OperatorSupport& s = kAddMul) {
  Result<Partitioning> p = propose_partitions(gm, s, o);
  REQUIRE_MESSAGE(p.is_ok(), p.status().message());
  CHECK(check_partitions(gm.graph, p->partitions).is_ok());
  return names_of(gm.graph, p->partitions);
}

// a -> relu -> b, and c beside them: b and c fuse (horizontally), a cannot join them.
constexpr std::string_view kBlockedByRelu = R"(
  x = placeholder
  a = call_function torch.add(x, 1)
  u = call_function torch.relu(a)
  b = call_function torch.add(u, 1)
  c = call_function torch.add(x, 2)
  return (b, c)
)";

TEST_CASE("partitions grow from the end, a path through an unsupported node splits them") {
  GraphModule gm = module_of_text(kBlockedByRelu);
  CHECK(partition(gm) == Names{{"b", "c"}});
  PartitionOptions single;
  single.allows_single_node_partition = true;
  CHECK(partition(gm, single) == Names{{"b", "c"}, {"a"}});
}

TEST_CASE("skip_horizontal_fusion merges only along data edges") {
  GraphModule gm = module_of_text(kBlockedByRelu);
  PartitionOptions o;
  o.skip_horizontal_fusion = true;
  CHECK(partition(gm, o).empty());
  o.allows_single_node_partition = true;
  CHECK(partition(gm, o) == Names{{"c"}, {"b"}, {"a"}});
}

TEST_CASE("skip_horizontal_fusion keeps a vertical pair that horizontal fusion splits") {
  // u feeds v and, through relu, w. Horizontally v joins w (both last), leaving u alone;
  // vertically u joins v.
  GraphModule gm = module_of_text(R"(
    x = placeholder
    u = call_function torch.add(x, 1)
    v = call_function torch.mul(u, 2)
    r = call_function torch.relu(u)
    w = call_function torch.add(r, 3)
    return (v, w)
  )");
  CHECK(partition(gm) == Names{{"v", "w"}});
  PartitionOptions o;
  o.skip_horizontal_fusion = true;
  CHECK(partition(gm, o) == Names{{"u", "v"}});
}

TEST_CASE("a diamond with one unsupported side cannot fuse around it") {
  GraphModule gm = module_of_text(R"(
    x = placeholder
    a = call_function torch.add(x, 1)
    r = call_function torch.relu(a)
    m = call_function torch.mul(a, 2)
    b = call_function torch.add(r, m)
    return b
  )");
  PartitionOptions single;
  single.allows_single_node_partition = true;
  Names p = partition(gm, single);
  CHECK(p == Names{{"m", "b"}, {"a"}});
  Result<Partitioning> r = propose_partitions(gm, kAddMul, {});
  REQUIRE(r.is_ok());
  CHECK(names_of(gm.graph, r->partitions) == Names{{"m", "b"}});
  REQUIRE(r->left_out.size() == 2);
  CHECK(gm.graph.name(r->left_out[0].node) == "a");
  CHECK(r->left_out[0].reason == LeftOutReason::SingleNode);
  CHECK(gm.graph.name(r->left_out[0].blocked_by) == "r");
  CHECK(gm.graph.name(r->left_out[1].node) == "r");
  CHECK(r->left_out[1].reason == LeftOutReason::Unsupported);
  CHECK(r->left_out[1].rule == "add_mul");
}

// A split read through two getitems, then add and mul.
constexpr std::string_view kSplitGetitems = R"(
  x = placeholder
  s = call_function torch.split(x, 2)
  g0 = call_function _operator.getitem(s, 0)
  g1 = call_function _operator.getitem(s, 1)
  a = call_function torch.add(g0, g1)
  m = call_function torch.mul(a, 2)
  return m
)";

TEST_CASE("getitems join their producer's partition, or leave with it") {
  GraphModule gm = module_of_text(kSplitGetitems);
  Result<Partitioning> r = propose_partitions(gm, kAddMul, {});
  REQUIRE(r.is_ok());
  CHECK(names_of(gm.graph, r->partitions) == Names{{"a", "m"}});
  REQUIRE(r->left_out.size() == 3);
  CHECK(r->left_out[1].reason == LeftOutReason::GetitemOfOutside);

  OperatorSupport with_split =
      OperatorSupport::any_chain("any", {kAddMul, OperatorSupport::targets("split", {"torch.split"})});
  CHECK(partition(gm, {}, with_split) == Names{{"s", "g0", "g1", "a", "m"}});
}

TEST_CASE("non-compute ops, allowed single-node ops, minimum and maximum sizes") {
  GraphModule gm = module_of_text(R"(
    x = placeholder
    a = call_function torch.add(x, 1)
    v = call_function torch.reshape(a, [2, 2])
    r = call_function torch.relu(v)
    b = call_function torch.mul(r, 2)
    c = call_function torch.add(b, 1)
    d = call_function torch.mul(c, 3)
    return d
  )");
  OperatorSupport s = OperatorSupport::targets("s", {"torch.add", "torch.mul", "torch.reshape"});
  PartitionOptions o;
  CHECK(partition(gm, o, s) == Names{{"b", "c", "d"}, {"a", "v"}});
  o.non_compute_ops = {"torch.reshape"};
  CHECK(partition(gm, o, s) == Names{{"b", "c", "d"}});
  o.allowed_single_node_partition_ops = {"torch.add"};
  CHECK(partition(gm, o, s) == Names{{"b", "c", "d"}, {"a", "v"}});
  o.remove_bookend_non_compute_ops = true;
  CHECK(partition(gm, o, s) == Names{{"b", "c", "d"}, {"a"}});
  PartitionOptions sizes;
  sizes.min_partition_size = 3;
  CHECK(partition(gm, sizes, s) == Names{{"b", "c", "d"}});
  sizes.max_partition_size = 2;
  sizes.min_partition_size = 0;
  sizes.allows_single_node_partition = true;
  CHECK(partition(gm, sizes, s) == Names{{"b", "c"}, {"d"}, {"a", "v"}});
}

TEST_CASE("support combinators: chain, any_chain, negate, excluded names, predicates") {
  GraphModule gm = module_of_text(kBlockedByRelu);
  OperatorSupport no_c = OperatorSupport::chain("no_c", {kAddMul, OperatorSupport::decline_names("names", {"c"})});
  CHECK_FALSE(no_c.is_supported(gm, gm.graph.find("c")));
  CHECK(no_c.decide(gm, gm.graph.find("c")).rule == "names");
  CHECK(no_c.is_supported(gm, gm.graph.find("b")));
  OperatorSupport not_add = OperatorSupport::negate("not_add", OperatorSupport::targets("adds", {"torch.add"}));
  CHECK(not_add.is_supported(gm, gm.graph.find("u")));
  CHECK(not_add.decide(gm, gm.graph.find("a")).rule == "not_add");
  OperatorSupport literal_one =
      OperatorSupport::predicate("adds_one", [](const Graph& g, const ModuleTable*, NodeId n) {
        const auto& args = g.args(n);
        return args.size() == 2 && args[1] == Argument(std::int64_t{1});
      });
  CHECK(literal_one.is_supported(gm, gm.graph.find("a")));
  CHECK_FALSE(literal_one.is_supported(gm, gm.graph.find("c")));
  CHECK_FALSE(literal_one.depends_only_on_target());
  CHECK(kAddMul.depends_only_on_target());

  PartitionOptions o;
  o.exclude_nodes = {"b"};
  o.allows_single_node_partition = true;
  CHECK(partition(gm, o) == Names{{"a", "c"}});
  o.exclude_nodes = {"nope"};
  CHECK_FALSE(propose_partitions(gm, kAddMul, o).is_ok());
}

TEST_CASE("check_partitions names a cycle and a node listed twice") {
  GraphModule gm = module_of_text(kBlockedByRelu);
  const Graph& g = gm.graph;
  Status cyclic = check_partitions(g, {{g.find("a"), g.find("b")}});
  REQUIRE_FALSE(cyclic.is_ok());
  CHECK(cyclic.message() == "fusing would create a cycle: partition 0 {a, b} -> 'u' -> partition 0 {a, b}");
  Status twice = check_partitions(g, {{g.find("a")}, {g.find("a"), g.find("c")}});
  REQUIRE_FALSE(twice.is_ok());
  CHECK(twice.message().find("is in partition 0 and in partition 1") != std::string::npos);
  CHECK_FALSE(check_partitions(g, {{g.find("x")}}).is_ok());
}

TEST_CASE("fuse_by_partitions makes a submodule per partition, with getitems for several outputs") {
  GraphModule gm = module_of_text(kBlockedByRelu);
  Graph& g = gm.graph;
  Result<std::vector<FusedPartition>> fused = fuse_by_partitions(gm, {{g.find("b"), g.find("c")}});
  REQUIRE_MESSAGE(fused.is_ok(), fused.status().message());
  CHECK(fused->front().module == "fused_0");
  CHECK(fused->front().outputs == 2);
  CHECK(to_graph_text(g) ==
        "x = placeholder\n"
        "a = call_function torch.add(x, 1)\n"
        "u = call_function torch.relu(a)\n"
        "fused_0 = call_module fused_0(u, x)\n"
        "getitem = call_function _operator.getitem(fused_0, 0)\n"
        "getitem_1 = call_function _operator.getitem(fused_0, 1)\n"
        "return (getitem, getitem_1)\n");
  const ModuleInfo* sub = gm.modules.find("fused_0");
  REQUIRE(sub != nullptr);
  REQUIRE(sub->graph.has_value());
  CHECK(sub->class_name == "torch.fx.graph_module.GraphModule");
  CHECK(to_graph_text(*sub->graph) ==
        "u = placeholder\n"
        "x = placeholder\n"
        "b = call_function torch.add(u, 1)\n"
        "c = call_function torch.add(x, 2)\n"
        "return (b, c)\n");
  CHECK(lint(gm).is_ok());
}

TEST_CASE("fuse_by_partitions: a partition with 100k outputs read by one concat") {
  // Each output's users were rewritten one output at a time: the concat's 100k arguments once
  // per output. One batch rewrites the concat once.
  GraphModule gm;
  Graph& g = gm.graph;
  NodeId x = g.placeholder("x");
  std::vector<NodeId> relus;
  std::vector<Argument> parts;
  relus.reserve(100000);
  parts.reserve(100000);
  for (int i = 0; i < 100000; ++i) {
    relus.push_back(g.create_node(OpKind::CallFunction, "torch.relu", {Argument::node(x)}));
    parts.push_back(Argument::node(relus.back()));
  }
  NodeId cat = g.create_node(OpKind::CallFunction, "torch.cat", {Argument::list(std::move(parts))});
  g.output(Argument::node(cat));
  Result<std::vector<FusedPartition>> fused = fuse_by_partitions(gm, {relus});
  REQUIRE_MESSAGE(fused.is_ok(), fused.status().message());
  CHECK(fused->front().outputs == 100000);
  const std::vector<Argument>& items = *g.args(cat)[0].items();
  REQUIRE(items.size() == 100000);
  bool in_order = true;
  for (std::size_t i = 0; i < items.size() && in_order; ++i) {
    const NodeId item = items[i].node_id();
    in_order = g.target(item) == "_operator.getitem" && g.args(item)[0].node_id() == fused->front().call &&
        g.args(item)[1] == Argument(static_cast<std::int64_t>(i));
  }
  CHECK(in_order);
  CHECK(g.size() == 100004);  // x, the call, 100k getitems, cat, output
  CHECK(lint(gm).is_ok());
}

TEST_CASE("fuse_by_partitions orders graph inputs as the graph does, and can always return a tuple") {
  // torch 2: when every outside value is a graph input, the placeholders follow the graph's
  // order (y is read first, x comes first); always_return_tuple returns (b,) read by a getitem.
  GraphModule gm = module_of_text(R"(
    x = placeholder
    y = placeholder
    a = call_function torch.mul(y, 2)
    b = call_function torch.add(x, a)
    c = call_function torch.neg(b)
    return c
  )");
  Graph& g = gm.graph;
  REQUIRE(fuse_by_partitions(gm, {{g.find("a"), g.find("b")}}, "fused_", true).is_ok());
  CHECK(to_graph_text(g) ==
        "x = placeholder\n"
        "y = placeholder\n"
        "fused_0 = call_module fused_0(x, y)\n"
        "getitem = call_function _operator.getitem(fused_0, 0)\n"
        "c = call_function torch.neg(getitem)\n"
        "return c\n");
  CHECK(to_graph_text(*gm.modules.find("fused_0")->graph) ==
        "x = placeholder\n"
        "y = placeholder\n"
        "a = call_function torch.mul(y, 2)\n"
        "b = call_function torch.add(x, a)\n"
        "return (b,)\n");
  CHECK(lint(gm).is_ok());
}

TEST_CASE("fuse_by_partitions refuses a cycle and changes nothing") {
  GraphModule gm = module_of_text(kBlockedByRelu);
  Graph& g = gm.graph;
  const std::string before = to_graph_text(g);
  Result<std::vector<FusedPartition>> fused = fuse_by_partitions(gm, {{g.find("a"), g.find("b")}});
  REQUIRE_FALSE(fused.is_ok());
  CHECK(fused.status().message().find("'u'") != std::string::npos);
  CHECK(to_graph_text(g) == before);
  CHECK(gm.modules.empty());
}

TEST_CASE("fusing keeps the order topological when a user sits between partition nodes") {
  // b and d fuse horizontally; c uses b and comes before d, so it must move after the call.
  GraphModule gm = module_of_text(R"(
    x = placeholder
    b = call_function torch.add(x, 1)
    c = call_function torch.relu(b)
    d = call_function torch.mul(x, 2)
    return (c, d)
  )");
  Graph& g = gm.graph;
  REQUIRE(fuse_by_partitions(gm, {{g.find("b"), g.find("d")}}).is_ok());
  CHECK(to_graph_text(g) ==
        "x = placeholder\n"
        "fused_0 = call_module fused_0(x)\n"
        "getitem = call_function _operator.getitem(fused_0, 0)\n"
        "c = call_function torch.relu(getitem)\n"
        "getitem_1 = call_function _operator.getitem(fused_0, 1)\n"
        "return (c, getitem_1)\n");
  CHECK(lint(gm).is_ok());
}

TEST_CASE("topological_sort_nodes keeps independent nodes in the given order") {
  GraphModule gm = module_of_text(kBlockedByRelu);
  const Graph& g = gm.graph;
  Result<std::vector<NodeId>> sorted = topological_sort_nodes(g, {g.find("c"), g.find("b"), g.find("a"), g.find("u")});
  REQUIRE(sorted.is_ok());
  std::vector<std::string> names;
  for (NodeId n : sorted.value()) names.push_back(g.name(n));
  CHECK(names == std::vector<std::string>{"c", "a", "u", "b"});
  // The ready node first in the list goes next (torch 2's heap), not the first made ready.
  GraphModule two = module_of_text(R"(
    x = placeholder
    y = placeholder
    a = call_function torch.mul(y, 2)
    b = call_function torch.add(x, a)
    c = call_function torch.neg(x)
    return (b, c)
  )");
  const Graph& h = two.graph;
  Result<std::vector<NodeId>> heap = topological_sort_nodes(h, {h.find("a"), h.find("b"), h.find("c")});
  REQUIRE(heap.is_ok());
  names.clear();
  for (NodeId n : heap.value()) names.push_back(h.name(n));
  CHECK(names == std::vector<std::string>{"a", "b", "c"});  // first come first served: a, c, b
  CHECK_FALSE(topological_sort_nodes(g, {g.find("a"), g.find("a")}).is_ok());
}

}  // namespace
}  // namespace graft

namespace graft {
namespace {

TEST_CASE("fusing nodes on a cycle fails cleanly (a graph mid-edit can hold one)") {
  // Found by the Lua API fuzzer: edits inside a pass may close a cycle before lint sees it.
  GraphModule gm = module_of_text(kBlockedByRelu);
  Graph& g = gm.graph;
  const NodeId u = g.find("u"), b = g.find("b");
  REQUIRE(g.set_args(u, {Argument::node(b)}).is_ok());  // u <-> b
  Result<std::vector<NodeId>> sorted = topological_sort_nodes(g, {u, b});
  REQUIRE_FALSE(sorted.is_ok());
  CHECK(sorted.status().message().find("cannot be ordered: it is on a cycle among the nodes") != std::string::npos);
  Result<std::vector<FusedPartition>> fused = fuse_by_partitions(gm, {{u, b}});
  CHECK_FALSE(fused.is_ok());
  CHECK(gm.modules.empty());
}

}  // namespace
}  // namespace graft

namespace graft {
namespace {

TEST_CASE("a getitem indexed by a node is an ordinary call: following its producer could make a cycle") {
  // Found in review: u1 = n[i] with i = relu(m) used to join n's partition with m, closing
  // m -> i -> u1 through the unsupported i.
  GraphModule gm = module_of_text(R"(
    x = placeholder
    m = call_function torch.add(x, 1)
    n = call_function torch.mul(x, 2)
    i = call_function torch.relu(m)
    u1 = call_function _operator.getitem(n, i)
    u2 = call_function _operator.getitem(n, 0)
    z = call_function torch.relu(u2)
    w = call_function torch.add(z, 1)
    return (u1, w)
  )");
  PartitionOptions single;
  single.allows_single_node_partition = true;
  CHECK(partition(gm, single) == Names{{"u1", "w"}, {"m", "n", "u2"}});
  CHECK(partition(gm) == Names{{"m", "n", "u2"}});
  PartitionOptions skip = single;
  skip.skip_horizontal_fusion = true;
  CHECK(partition(gm, skip) == Names{{"w"}, {"n", "u1", "u2"}, {"m"}});
  Result<Partitioning> p = propose_partitions(gm, kAddMul, {.skip_horizontal_fusion = true});
  REQUIRE(p.is_ok());
  for (const LeftOutNode& l : p->left_out) CHECK(l.blocked_by == kNoNode);  // levels explain only their own mode
}

TEST_CASE("a graph whose order is not topological is refused, naming the node") {
  GraphModule gm = module_of_text(kBlockedByRelu);
  Graph& g = gm.graph;
  REQUIRE(g.move_after(g.find("a"), g.find("b")).is_ok());  // a pass may do this before lint runs
  Result<Partitioning> p = propose_partitions(gm, kAddMul, {});
  REQUIRE_FALSE(p.is_ok());
  CHECK(p.status().message() == "node 'u': uses 'a' before it is defined: the graph's order is not topological");
}

TEST_CASE("excluded getitems stay out, maximum sizes are cut before the size filters") {
  GraphModule gm = module_of_text(kSplitGetitems);
  OperatorSupport with_split =
      OperatorSupport::any_chain("any", {kAddMul, OperatorSupport::targets("split", {"torch.split"})});
  PartitionOptions o;
  o.exclude_nodes = {"g0"};
  Result<Partitioning> p = propose_partitions(gm, with_split, o);
  REQUIRE(p.is_ok());
  // g0, now outside, sits between s and a: s and its other getitem form their own level
  CHECK(names_of(gm.graph, p->partitions) == Names{{"a", "m"}});
  REQUIRE(p->left_out.size() == 3);
  CHECK(gm.graph.name(p->left_out[1].node) == "g0");
  CHECK(p->left_out[1].reason == LeftOutReason::Excluded);
  CHECK(p->left_out[0].reason == LeftOutReason::SingleNode);  // s with g1: one compute node
  CHECK(p->left_out[2].reason == LeftOutReason::SingleNode);

  PartitionOptions sizes;
  sizes.max_partition_size = 2;  // s g0 | g1 a | m: g1 goes back to s; then every run is single
  CHECK(partition(gm, sizes, with_split).empty());
  sizes.allows_single_node_partition = true;
  CHECK(partition(gm, sizes, with_split) == Names{{"s", "g0", "g1"}, {"a"}, {"m"}});
}

}  // namespace
}  // namespace graft
