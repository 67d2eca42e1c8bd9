"""The passes of torch.fx's guide "Writing Graph Transformations on ATen IR", on graft's engine.

Every example is the guide's own code; only the imports say `graft.fx` where the guide says
`torch.fx`. tests/python/test_python_module.py runs this file both ways and compares.

    tools/python examples/python/fx_guide_passes.py
"""
import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.passes.infra.pass_base import PassResult

from graft.fx import subgraph_rewriter
from graft.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from graft.fx.passes.infra.pass_manager import PassManager
from graft.fx.passes.operator_support import OperatorSupportBase, any_chain
from graft.fx.passes.utils.matcher_utils import SubgraphMatcher


def model(x, y):
    a = (x + y) * y
    b = torch.relu(a) + x
    return (b + y) * y, a * b


def aten_graph():
    x, y = torch.randn(4, 4), torch.randn(4, 4)
    return make_fx(model)(x, y), (x, y)


# --- Subgraph Rewriter -----------------------------------------------------------------------

def replace_patterns(traced_module):
    def pattern(x, y):
        x = torch.ops.aten.add.Tensor(x, y)
        x = torch.ops.aten.mul.Tensor(x, y)
        return x

    def replacement(x, y):
        return torch.ops.aten.sub.Tensor(x, y)

    replaced_patterns = subgraph_rewriter.replace_pattern_with_filters(traced_module, pattern, replacement)
    return replaced_patterns


# --- Pass Manager ----------------------------------------------------------------------------

def replace_add_with_div(gm):
    modified = False
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target == torch.ops.aten.add.Tensor:
            node.target = torch.ops.aten.div.Tensor
            modified = True
    return PassResult(gm, modified)


def replace_div_with_mul(gm):
    modified = False
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target == torch.ops.aten.div.Tensor:
            node.target = torch.ops.aten.mul.Tensor
            modified = True
    return PassResult(gm, modified)


def check_div_target(graph_module):
    for node in graph_module.graph.nodes:
        if node.op == "call_function" and node.target != torch.div:
            raise ValueError("Target should be div!")


def run_pass_manager(graph_module):
    pm = PassManager(
        passes=[replace_add_with_div, replace_div_with_mul],
        run_checks_after_each_pass=True,
        suppress_check_failures=False,
    )
    graph_module_out = pm(graph_module)
    return graph_module_out


def run_pass_manager_with_checks(graph_module):
    pm = PassManager(passes=[replace_add_with_div, replace_div_with_mul])
    pm.add_checks(check_div_target)
    try:
        pm(graph_module)  # raises ValueError after replace_div_with_mul pass
    except ValueError as e:
        return str(e)
    return None


# --- Subgraph Matcher ------------------------------------------------------------------------

class LargeModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self._weight = torch.nn.Parameter(torch.ones(3, 3))
        self._bias = torch.nn.Parameter(torch.ones(3, 3))

    def forward(self, x):
        return torch.ops.aten.addmm.default(self._bias, x, self._weight)


class PatternModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self._weight_1 = torch.nn.Parameter(torch.ones(5, 5))
        self._bias_1 = torch.nn.Parameter(torch.ones(5, 5))

    def forward(self, x):
        return torch.ops.aten.addmm.default(self._bias_1, x, self._weight_1)


def match_addmm():
    # The guide exports with torch.export, which lifts the parameters into graph inputs;
    # symbolic_trace keeps them as the get_attr nodes this example is about.
    large_model_graph = torch.fx.symbolic_trace(LargeModel()).graph
    pattern_graph = torch.fx.symbolic_trace(PatternModel()).graph
    subgraph_matcher = SubgraphMatcher(pattern_graph)
    match_result = subgraph_matcher.match(large_model_graph)
    return match_result


# --- Capability Based Partitioner ------------------------------------------------------------

class AddMulOperatorSupport(OperatorSupportBase):
    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        return node.op == "call_function" and node.target in [
            torch.ops.aten.add.Tensor, torch.ops.aten.mul.Tensor,
        ]


class ReluOperatorSupport(OperatorSupportBase):
    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        return node.op == "call_function" and node.target == torch.ops.aten.relu.default


def partition(graph_module, with_relu=False):
    op_support = any_chain(AddMulOperatorSupport(), ReluOperatorSupport()) if with_relu else AddMulOperatorSupport()
    capability_partitioner = CapabilityBasedPartitioner(
        graph_module,
        op_support,
    )

    # Returns a list of partitions (list of nodes that belong in each partition)
    partition_list = capability_partitioner.propose_partitions()
    # Fuses the partitions into graph modules and inserts `call_module` nodes in the graph
    fused_graph_module = capability_partitioner.fuse_partitions(partition_list)
    return partition_list, fused_graph_module


def main():
    """Runs every example; returns what each produced, for people and for the test."""
    results = {}
    gm, inputs = aten_graph()
    want = gm(*inputs)
    replaced = replace_patterns(gm)
    results["rewriter"] = (len(replaced), gm.code, [torch.equal(a, b) for a, b in zip(gm(*inputs), want)])
    results["rewriter_nodes"] = [(r.anchor.name, sorted((p.name, n.name) for p, n in r.nodes_map.items()))
                                 for r in replaced]

    gm, inputs = aten_graph()
    out = run_pass_manager(gm)
    results["pass_manager"] = (out.modified, out.graph_module.code)
    gm, inputs = aten_graph()
    results["pass_manager_checks"] = run_pass_manager_with_checks(gm)

    matches = match_addmm()
    results["matcher"] = [([a.name for a in m.anchors], [(p.name, n.name) for p, n in m.nodes_map.items()],
                           [n.name for n in m.placeholder_nodes], [n.name for n in m.returning_nodes])
                          for m in matches]

    for with_relu in (False, True):
        gm, inputs = aten_graph()
        want = gm(*inputs)
        parts, fused = partition(gm, with_relu)
        results[f"partitions_relu_{with_relu}"] = (sorted(sorted(n.name for n in p.nodes) for p in parts),
                                                   sorted(name for name, _ in fused.named_children()),
                                                   all(torch.equal(a, b) for a, b in zip(fused(*inputs), want)))
    return results


if __name__ == "__main__":
    for key, value in main().items():
        print(f"{key}: {value}")
