"""graft where PyTorch 2 code runs: a torch.compile backend, an exported program, a custom op.

    tools/python examples/python/torch2_workflows.py

A backend's custom op (npu::npu_quant_matmul, registered with torch.library.custom_op with a
fake implementation) is called on a transposed weight; the rule in rules/quant_matmul.lua
calls the backend's kernel that takes the weight as stored instead. The same rule runs on
the ATen graphs torch.compile makes (graft.backend, aot=True) and on an ExportedProgram
(graft.export.run), which then saves and loads like any other. Each result is checked
against the model run eagerly.
"""
import io
import os

import torch
from torch import Tensor

import graft

RULES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules", "quant_matmul.lua")


@torch.library.custom_op("npu::npu_quant_matmul", mutates_args=())
def npu_quant_matmul(x1: Tensor, x2: Tensor, scale: Tensor, offset: Tensor | None = None,
                     pertoken_scale: Tensor | None = None, bias: Tensor | None = None) -> Tensor:
    out = (x1 @ x2) * scale
    return out + bias if bias is not None else out


@npu_quant_matmul.register_fake
def _(x1, x2, scale, offset=None, pertoken_scale=None, bias=None):
    return x1.new_empty(x1.shape[0], x2.shape[1])


@torch.library.custom_op("npu::npu_quant_matmul_t", mutates_args=())
def npu_quant_matmul_t(x1: Tensor, x2: Tensor, scale: Tensor, offset: Tensor | None = None,
                       pertoken_scale: Tensor | None = None, bias: Tensor | None = None) -> Tensor:
    out = (x1 @ x2.transpose(0, 1)) * scale
    return out + bias if bias is not None else out


@npu_quant_matmul_t.register_fake
def _(x1, x2, scale, offset=None, pertoken_scale=None, bias=None):
    return x1.new_empty(x1.shape[0], x2.shape[0])


class QuantMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w1, self.w2 = torch.nn.Parameter(torch.randn(16, 8)), torch.nn.Parameter(torch.randn(4, 16))
        self.b2, self.scale = torch.nn.Parameter(torch.randn(4)), torch.nn.Parameter(torch.tensor(0.25))

    def forward(self, x):
        h = torch.relu(torch.ops.npu.npu_quant_matmul(x, self.w1.transpose(0, 1), self.scale))
        return torch.ops.npu.npu_quant_matmul(h, self.w2.transpose(0, 1), self.scale, bias=self.b2)


def main():
    torch.manual_seed(0)
    model = QuantMLP().requires_grad_(False)
    x = torch.randn(5, 8)
    want = model(x)

    backend = graft.backend(RULES, then="eager", aot=True)
    compiled = torch.compile(model, backend=backend, dynamic=True)
    for rows in (5, 9):
        batch = torch.randn(rows, 8)
        torch.testing.assert_close(compiled(batch), model(batch))
    print("torch.compile:", backend.summary())

    ep = torch.export.export(model, (x,))
    rewritten, report = graft.export.run(RULES, ep)
    buffer = io.BytesIO()
    torch.export.save(rewritten, buffer)
    buffer.seek(0)
    torch.testing.assert_close(torch.export.load(buffer).module()(x), want)
    rewrites = sum(r["rewrites"] for p in report["passes"] for r in p.get("rules", []))
    calls = [str(n.target) for n in rewritten.graph.nodes if n.op == "call_function"]
    print(f"torch.export: {rewrites} rewrites; the program calls {', '.join(calls)}; saved, loaded, same outputs")


if __name__ == "__main__":
    main()
