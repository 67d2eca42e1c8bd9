"""Inductor's pattern language on graft's matcher: seed 003's replacement, written as inductor's
users write it, run as inductor's post-grad pass inside torch.compile.

    tools/python examples/python/inductor_patterns.py

A backend computes `(x @ w) * scale` in one kernel, npu::quant_mm (a torch.library custom op
with a fake implementation). The rule is inductor's `register_replacement` with its own
`fwd_only` tracing; only the import changes (`graft.pattern_matcher` for
`torch._inductor.pattern_matcher`). The same rule, registered with inductor's own pass, is run
beside it on the same graph: both must replace the same matches, and the compiled model must
compute what the eager one does.
"""
import copy

import torch
from torch import Tensor
from torch._inductor import pattern_matcher as inductor
from torch.fx.experimental.proxy_tensor import make_fx

import graft.pattern_matcher as pm


@torch.library.custom_op("npu::quant_mm", mutates_args=())
def quant_mm(x: Tensor, w: Tensor, scale: Tensor) -> Tensor:
    return (x @ w) * scale


@quant_mm.register_fake
def _(x, w, scale):
    return x.new_empty(x.shape[0], w.shape[1])


def search(x, w, scale):
    return torch.mm(x, w) * scale


def replace(x, w, scale):
    return torch.ops.npu.quant_mm(x, w, scale)


def example_inputs():
    return [torch.randn(8, 8), torch.randn(8, 8), torch.randn(())]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w1, self.w2 = torch.nn.Parameter(torch.randn(16, 32)), torch.nn.Parameter(torch.randn(32, 4))
        self.scale = torch.nn.Parameter(torch.tensor(0.25))

    def forward(self, x):
        h = torch.relu(torch.mm(x, self.w1) * self.scale)
        shared = torch.mm(h, self.w2)
        return shared * self.scale + shared  # mm used twice: not a match (its _users is 1)


def main():
    torch.manual_seed(0)
    ours, theirs = pm.PatternMatcherPass(), inductor.PatternMatcherPass()
    pm.register_replacement(search, replace, example_inputs(), pm.fwd_only, ours)
    inductor.register_replacement(search, replace, example_inputs(), inductor.fwd_only, theirs)

    model, x = Model().requires_grad_(False), torch.randn(4, 16)
    names = [name for name, _ in model.named_parameters()]

    def functional(x, *params):  # the parameters as inputs, so that make_fx fakes them too
        return torch.func.functional_call(model, dict(zip(names, params)), (x,))

    graph = make_fx(functional, tracing_mode="fake")(x, *model.parameters())
    by_graft, by_inductor = copy.deepcopy(graph), copy.deepcopy(graph)
    print(f"on a traced graph: graft replaced {ours.apply(by_graft)}, inductor {theirs.apply(by_inductor)}")
    print(f"graft's graph calls npu.quant_mm "
          f"{sum(n.target is torch.ops.npu.quant_mm.default for n in by_graft.graph.nodes)} times")

    replaced = []
    with torch._inductor.config.patch(post_grad_custom_post_pass=lambda g: replaced.append(ours.apply(g))):
        compiled = torch.compile(model)
        out = compiled(x)
    torch.testing.assert_close(out, model(x))
    print(f"torch.compile: graft's pass replaced {sum(replaced)} in the post-grad graph; outputs equal eager's")


if __name__ == "__main__":
    main()
