"""Small models whose graphs exercise the shipped rules that torchvision's models do not
(`graft verify` checks each rule on the graphs it names; scripts/rules/*.lua name the files made
from these, examples/graphs/rule_examples.*.json).

A graph file may name these by themselves (`meta.source`), as it may name torchvision's models:
they are registered here (graft_fx.trust.registered_model), so building one runs no code a file
chose. Export (examples/graphs/regenerate.sh):
    python3 -m graft_fx export graft_fx.example_models.activations --mode symbolic ...
"""
import torch
import torch.nn.functional as F


class Activations(torch.nn.Module):
    """A Linear followed by each activation the linear_act rules fuse: as modules (FX graphs
    keep them as call_module nodes), and in place on a 3-d input (ATen graphs: addmm -> view ->
    an in-place activation, with autograd's dead clone of its input)."""

    def __init__(self):
        super().__init__()
        self.acts = torch.nn.ModuleList([torch.nn.ReLU(), torch.nn.SiLU(), torch.nn.Sigmoid(), torch.nn.Tanh(),
                                         torch.nn.Hardsigmoid(), torch.nn.GELU(), torch.nn.Hardswish()])
        self.linears = torch.nn.ModuleList([torch.nn.Linear(8, 8) for _ in self.acts])

    def forward(self, x):
        for linear, act in zip(self.linears, self.acts):
            x = act(linear(x))
        return F.hardswish(self.linears[0](x), inplace=True) + F.relu(self.linears[1](x), inplace=True)


def activations():
    return Activations()


# What a graph file's meta.source may name without the caller's trust.
REGISTERED = {"graft_fx.example_models.activations": activations}
