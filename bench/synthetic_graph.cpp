// Synthetic transformer stacks: realistic op mix, names, meta and dotted parameter paths.
#include "synthetic_graph.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace graft::bench {

namespace {

constexpr std::int64_t kSeq = 197, kHidden = 768, kHeads = 12, kHeadDim = 64, kMlp = 3072;

struct Builder {
  GraphModule& gm;
  Graph& g = gm.graph;

  NodeId call(const char* target, std::vector<Argument> args, Dims shape) {
    NodeId n = g.create_node(OpKind::CallFunction, target, std::move(args));
    TensorMeta t;
    t.dtype = "float32";
    t.device = "cpu";
    t.shape = shape;
    std::int64_t stride = 1;
    t.stride.resize(shape.size());
    for (std::size_t i = shape.size(); i-- > 0;) {
      t.stride[i] = stride;
      stride *= shape[i].value();
    }
    g.edit_meta(n).tensor_meta = ValueMeta{ValueMeta::Kind::Tensor, std::move(t), {}};
    return n;
  }

  NodeId weight(const std::string& module, const char* name, Dims shape) {
    ModuleInfo* m = gm.modules.edit(module);
    if (!m) {
      ModuleInfo info;
      info.path = module;
      info.class_name = "torch.nn.modules.linear.Linear";
      (void)gm.modules.add(std::move(info));
      m = gm.modules.edit(module);
    }
    m->parameters.push_back({name, shape, "float32"});
    return g.create_node(OpKind::GetAttr, module + "." + name);
  }

  NodeId linear(const std::string& module, NodeId x, std::int64_t in, std::int64_t out) {
    NodeId w = weight(module, "weight", {out, in});
    NodeId b = weight(module, "bias", {out});
    NodeId t = call("torch.ops.aten.t.default", {Argument::node(w)}, {in, out});
    return call("torch.ops.aten.addmm.default", {Argument::node(b), Argument::node(x), Argument::node(t)}, {kSeq, out});
  }

  NodeId layer_norm(const std::string& module, NodeId x) {
    NodeId w = weight(module, "weight", {kHidden});
    NodeId b = weight(module, "bias", {kHidden});
    NodeId ln = call("torch.ops.aten.native_layer_norm.default",
                     {Argument::node(x), Argument::list({kHidden}), Argument::node(w), Argument::node(b), 1e-06},
                     {kSeq, kHidden});
    return call("_operator.getitem", {Argument::node(ln), 0}, {kSeq, kHidden});
  }

  NodeId block(std::size_t i, NodeId x) {
    std::string p = "encoder.layers." + std::to_string(i) + ".";
    NodeId h = layer_norm(p + "ln_1", x);
    NodeId q = linear(p + "self_attention.q_proj", h, kHidden, kHidden);
    NodeId k = linear(p + "self_attention.k_proj", h, kHidden, kHidden);
    NodeId v = linear(p + "self_attention.v_proj", h, kHidden, kHidden);
    auto heads = [&](NodeId t) {
      NodeId view = call("torch.ops.aten.view.default", {Argument::node(t), Argument::list({kSeq, kHeads, kHeadDim})},
                         {kSeq, kHeads, kHeadDim});
      return call("torch.ops.aten.transpose.int", {Argument::node(view), 0, 1}, {kHeads, kSeq, kHeadDim});
    };
    NodeId qh = heads(q), kh = heads(k), vh = heads(v);
    NodeId kt = call("torch.ops.aten.transpose.int", {Argument::node(kh), -2, -1}, {kHeads, kHeadDim, kSeq});
    NodeId scores = call("torch.ops.aten.bmm.default", {Argument::node(qh), Argument::node(kt)}, {kHeads, kSeq, kSeq});
    NodeId scaled = call("torch.ops.aten.div.Tensor", {Argument::node(scores), 8.0}, {kHeads, kSeq, kSeq});
    NodeId attn = call("torch.ops.aten._softmax.default", {Argument::node(scaled), -1, false}, {kHeads, kSeq, kSeq});
    NodeId ctx =
        call("torch.ops.aten.bmm.default", {Argument::node(attn), Argument::node(vh)}, {kHeads, kSeq, kHeadDim});
    NodeId merged = call("torch.ops.aten.transpose.int", {Argument::node(ctx), 0, 1}, {kSeq, kHeads, kHeadDim});
    // reshape, not view: the transposed heads are not contiguous (a view would fail in PyTorch)
    NodeId flat = call("torch.ops.aten.reshape.default", {Argument::node(merged), Argument::list({kSeq, kHidden})},
                       {kSeq, kHidden});
    NodeId o = linear(p + "self_attention.out_proj", flat, kHidden, kHidden);
    NodeId r1 = call("torch.ops.aten.add.Tensor", {Argument::node(o), Argument::node(x)}, {kSeq, kHidden});
    NodeId h2 = layer_norm(p + "ln_2", r1);
    NodeId up = linear(p + "mlp.0", h2, kHidden, kMlp);
    NodeId act = call("torch.ops.aten.gelu.default", {Argument::node(up)}, {kSeq, kMlp});
    NodeId down = linear(p + "mlp.3", act, kMlp, kHidden);
    return call("torch.ops.aten.add.Tensor", {Argument::node(down), Argument::node(r1)}, {kSeq, kHidden});
  }
};

}  // namespace

GraphModule transformer_stack(std::size_t nodes) {
  GraphModule gm;
  ModuleInfo root;
  root.class_name = "graft.bench.TransformerStack";
  (void)gm.modules.add(std::move(root));
  gm.meta_json = R"({"producer":"graft_io_bench","kind":"transformer_stack"})";
  Builder b{gm};
  NodeId x = b.g.placeholder("x");
  TensorMeta t{{kSeq, kHidden}, "float32", {kHidden, 1}, "cpu"};
  b.g.edit_meta(x).tensor_meta = ValueMeta{ValueMeta::Kind::Tensor, t, {}};
  for (std::size_t i = 0; b.g.size() + 1 < nodes; ++i) x = b.block(i, x);
  b.g.output(Argument::node(x));
  return gm;
}

GraphModule add_relu_chain(std::size_t nodes) {
  GraphModule gm;
  Graph& g = gm.graph;
  g.reserve(nodes + 3);
  NodeId x = g.placeholder("x");
  NodeId y = g.placeholder("y");
  NodeId cur = x;
  for (std::size_t i = 0; i < nodes / 2; ++i) {
    NodeId a = g.create_node(OpKind::CallFunction, "torch.add", {Argument::node(cur), Argument::node(y)});
    cur = g.create_node(OpKind::CallFunction, "torch.relu", {Argument::node(a)});
  }
  g.output(Argument::node(cur));
  return gm;
}

GraphModule scattered_chain(std::size_t nodes, unsigned unsupported_per_mille, std::uint64_t seed) {
  GraphModule gm;
  Graph& g = gm.graph;
  g.reserve(nodes + 2);
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&state] {  // splitmix64: the same graph on every platform
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  std::vector<NodeId> made{g.placeholder("x")};
  for (std::size_t i = 0; i < nodes; ++i) {
    const NodeId prev = made.back();
    if (next() % 1000 < unsupported_per_mille) {
      made.push_back(g.create_node(OpKind::CallFunction, "torch.relu", {Argument::node(prev)}));
      continue;
    }
    NodeId other = prev;
    if (next() % 5 == 0) other = made[made.size() - 1 - next() % std::min<std::size_t>(made.size(), 64)];
    made.push_back(g.create_node(OpKind::CallFunction, next() % 2 ? "torch.add" : "torch.mul",
                                 {Argument::node(prev), Argument::node(other)}));
  }
  g.output(Argument::node(made.back()));
  return gm;
}

namespace {

constexpr std::int64_t kFamilyWidth = 1024;  // every family tensor: float32 [1024]

NodeId family_call(Graph& g, OpKind op, std::string_view target, std::vector<Argument> args) {
  NodeId n = g.create_node(op, std::string(target), std::move(args));
  TensorMeta t{{kFamilyWidth}, "float32", {1}, "cpu"};
  g.edit_meta(n).tensor_meta = ValueMeta{ValueMeta::Kind::Tensor, std::move(t), {}};
  return n;
}

NodeId family_input(Graph& g) {
  NodeId x = g.placeholder("x");
  TensorMeta t{{kFamilyWidth}, "float32", {1}, "cpu"};
  g.edit_meta(x).tensor_meta = ValueMeta{ValueMeta::Kind::Tensor, std::move(t), {}};
  return x;
}

GraphModule opaque_chain(std::size_t nodes) {
  GraphModule gm;
  Graph& g = gm.graph;
  g.reserve(nodes + 2);
  NodeId cur = family_input(g);
  for (std::size_t i = 0; i < nodes; ++i)
    cur = family_call(g, OpKind::CallFunction, "graft_bench.opaque", {Argument::node(cur)});
  g.output(Argument::node(cur));
  return gm;
}

GraphModule fan(std::size_t nodes) {
  GraphModule gm;
  Graph& g = gm.graph;
  g.reserve(nodes + 3);
  NodeId x = family_input(g);
  std::vector<Argument> parts;
  parts.reserve(nodes);
  for (std::size_t i = 0; i < nodes; ++i)
    parts.push_back(Argument::node(family_call(g, OpKind::CallFunction, "torch.relu", {Argument::node(x)})));
  NodeId cat = family_call(g, OpKind::CallFunction, "torch.cat", {Argument::list(std::move(parts))});
  g.output(Argument::node(cat));
  return gm;
}

GraphModule lattice(std::size_t nodes) {
  constexpr std::size_t kWidth = 8;
  GraphModule gm;
  Graph& g = gm.graph;
  g.reserve(nodes + kWidth + 2);
  NodeId x = family_input(g);
  std::vector<NodeId> row(kWidth, x), next(kWidth);
  for (std::size_t made = 0; made + kWidth <= nodes; made += kWidth) {
    for (std::size_t j = 0; j < kWidth; ++j)
      next[j] = family_call(g, OpKind::CallFunction, "torch.add",
                            {Argument::node(row[j]), Argument::node(row[(j + 1) % kWidth])});
    row.swap(next);
  }
  NodeId sum = row[0];
  for (std::size_t j = 1; j < kWidth; ++j)
    sum = family_call(g, OpKind::CallFunction, "torch.add", {Argument::node(sum), Argument::node(row[j])});
  g.output(Argument::node(sum));
  return gm;
}

GraphModule hierarchy(std::size_t nodes) {
  constexpr int kDepth = 16;
  GraphModule gm;
  ModuleInfo root;
  root.class_name = "graft.bench.Hierarchy";
  (void)gm.modules.add(std::move(root));
  gm.modules.reserve(2 * nodes + kDepth);
  Graph& g = gm.graph;
  g.reserve(nodes + 2);
  NodeId cur = family_input(g);
  for (std::size_t i = 0; i < nodes; ++i) {
    // The leaf's parent spells i's low 16 bits, most significant level first; its ancestors are
    // added on the way down (a shared prefix is already there).
    std::string path;
    for (int level = kDepth - 1; level >= 0; --level) {
      path += (path.empty() ? "b" : ".b") + std::to_string((i >> level) & 1);
      if (gm.modules.find(path) != nullptr) continue;
      ModuleInfo info;
      info.path = path;
      info.class_name = "torch.nn.modules.container.Sequential";
      (void)gm.modules.add(std::move(info));
    }
    path += ".r" + std::to_string(i);
    ModuleInfo leaf;
    leaf.path = path;
    leaf.class_name = "torch.nn.modules.activation.ReLU";
    (void)gm.modules.add(std::move(leaf));
    cur = family_call(g, OpKind::CallModule, path, {Argument::node(cur)});
  }
  g.output(Argument::node(cur));
  return gm;
}

}  // namespace

GraphModule family_graph(std::string_view family, std::size_t nodes) {
  if (family == "chain") return opaque_chain(nodes);
  if (family == "fan") return fan(nodes);
  if (family == "lattice") return lattice(nodes);
  if (family == "stack") return transformer_stack(nodes);
  if (family == "hierarchy") return hierarchy(nodes);
  throw std::invalid_argument("no graph family named " + std::string(family));
}

}  // namespace graft::bench
