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
    keep them as call_module nodes), in place on a 3-d input (ATen graphs: addmm -> view -> an
    in-place activation, with autograd's dead clone of its input), and on a 2-d input (addmm
    straight into the activation: core ATen's permuted weight without a view)."""

    def __init__(self):
        super().__init__()
        self.acts = torch.nn.ModuleList([torch.nn.ReLU(), torch.nn.SiLU(), torch.nn.Sigmoid(), torch.nn.Tanh(),
                                         torch.nn.Hardsigmoid(), torch.nn.GELU(), torch.nn.Hardswish()])
        self.linears = torch.nn.ModuleList([torch.nn.Linear(8, 8) for _ in self.acts])

    def forward(self, x):
        for linear, act in zip(self.linears, self.acts):
            x = act(linear(x))
        y = F.hardswish(self.linears[0](x), inplace=True) + F.relu(self.linears[1](x), inplace=True)
        return y + F.relu(self.linears[2](x[:, 0])).unsqueeze(1)


def activations():
    return Activations()


class ConvBatchNorms(torch.nn.Module):
    """A convolution of each rank, each followed by an eval-mode batch norm with statistics
    that are not the identity (a bias-free convolution, a grouped and dilated one, a batch norm
    without affine parameters): what scripts/rules/conv_bn_aten.lua folds."""

    def __init__(self):
        super().__init__()
        self.c1, self.b1 = torch.nn.Conv1d(3, 4, 3, padding=1), torch.nn.BatchNorm1d(4)
        self.c2, self.b2 = torch.nn.Conv2d(3, 4, 3, stride=2, bias=False), torch.nn.BatchNorm2d(4)
        self.c3, self.b3 = torch.nn.Conv3d(3, 4, 1, groups=1, dilation=2), torch.nn.BatchNorm3d(4, affine=False)
        for i, bn in enumerate((self.b1, self.b2, self.b3)):
            bn.running_mean.copy_(torch.linspace(-1, 1, 4) * (i + 1))
            bn.running_var.copy_(torch.linspace(0.5, 2, 4))

    def forward(self, x):
        y1 = self.b1(self.c1(x.flatten(2)))
        y2 = self.b2(self.c2(x))
        y3 = self.b3(self.c3(x.unsqueeze(2)))
        return y1.sum(-1) + y2.sum((-2, -1)) + y3.sum((-3, -2, -1))


def conv_batch_norms():
    return ConvBatchNorms().eval()


# What a graph file's meta.source may name without the caller's trust.
REGISTERED = {"graft_fx.example_models.activations": activations,
              "graft_fx.example_models.conv_batch_norms": conv_batch_norms}
