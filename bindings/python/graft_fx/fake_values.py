"""Fake values for the nodes a rewrite added, computed as PyTorch's tracers compute them.

torch.compile's graphs carry a fake tensor on every node (`meta['example_value']` in dynamo's
graphs, `meta['val']` in AOT autograd's and torch.export's); the passes after graft read them.
Nodes graft added have none: `fill_fake_values` runs just those nodes under the graph's own
FakeTensorMode, so their values come from the ops' fake implementations (a custom op's
`register_fake` included) with the graph's symbolic sizes, and nodes already traced keep theirs.
"""
import torch

__all__ = ["fill_fake_values", "graph_fake_mode"]


def graph_fake_mode(gm, key, example_inputs=()):
    """The FakeTensorMode the graph's values were made in (dynamo hands a backend a fresh mode
    sharing their ShapeEnv, which cannot mix with them), else the one the example inputs or the
    tracing context have; None for a graph without fake values."""
    from torch._guards import detect_fake_mode
    from torch._subclasses.fake_tensor import FakeTensor
    for n in gm.graph.nodes:
        if isinstance(n.meta.get(key), FakeTensor):
            return n.meta[key].fake_mode
    return detect_fake_mode(list(example_inputs))


class _Filler(torch.fx.Interpreter):
    def __init__(self, gm, key, mode):
        super().__init__(gm, garbage_collect_values=False)
        self.key, self.mode, self.filled = key, mode, []

    def run_node(self, n):
        if n.op == "output":
            return None
        if self.key in n.meta:
            return n.meta[self.key]
        if n.op == "placeholder":
            raise ValueError(f"placeholder {n.name} has no meta[{self.key!r}]")
        if n.op == "get_attr":
            value = self.fetch_attr(n.target)
            if isinstance(value, torch.Tensor):
                value = self.mode.from_tensor(value, static_shapes=True)
        else:
            with self.mode:
                value = super().run_node(n)
        n.meta[self.key] = value
        self.filled.append(n.name)
        return value


def fill_fake_values(gm, key, mode):
    """Gives every node of `gm` without `meta[key]` the fake value its op computes from its
    inputs' values under `mode`. Returns the names of the nodes filled. Raises what the op's
    fake implementation raises (the nodes filled before it keep their values)."""
    filler = _Filler(gm, key, mode)
    for node in gm.graph.nodes:
        filler.env[node] = filler.run_node(node)
    return filler.filled

