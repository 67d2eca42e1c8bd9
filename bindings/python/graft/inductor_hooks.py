"""A graft script as one of inductor's custom graph passes.

    import torch._inductor.config as config
    config.post_grad_custom_post_pass = graft.inductor_pass("rules.lua")
    config.pre_grad_custom_pass = graft.inductor_pass("torch_ir_rules.lua", stage="pre_grad")

Post-grad passes see each forward, backward or inference graph as ATen after AOT autograd's
functionalisation (no `copy_` but for input mutations); the pre-grad pass sees dynamo's Torch IR
graph. The pass is a CustomGraphPass whose uuid() hashes the script and the modules it requires,
so inductor's FX graph cache stays on and misses when the script changes.
"""
import hashlib

import torch
from torch._inductor.custom_graph_pass import CustomInferenceAwareGraphPass

from .graph_rewrite import GraphRewriter

__all__ = ["InductorPass", "inductor_pass"]

# stage -> the meta key holding each node's fake value in that stage's graphs
_FAKE_KEYS = {"pre_grad": "example_value", "joint": "val", "post_grad": "val"}


def _aten_stage(gm, is_inference):
    if is_inference:
        return "inference"
    tangents = any(n.op == "placeholder" and n.name.startswith("tangents") for n in gm.graph.nodes)
    return "backward" if tangents else "forward"


class InductorPass(CustomInferenceAwareGraphPass):
    """Runs a graft script on each graph inductor hands this pass; `reports` says what it did."""

    def __init__(self, script=None, stage="post_grad", strict=False, reload=True, script_roots=(), rewriter=None,
                 **budgets):
        if stage not in _FAKE_KEYS:
            raise ValueError(f"graft.inductor_pass: stage {stage!r} is not one of {', '.join(_FAKE_KEYS)}")
        self.stage = stage
        self.rewriter = rewriter or GraphRewriter(script, strict=strict, reload=reload, script_roots=script_roots,
                                                  **budgets)

    @property
    def reports(self):
        return self.rewriter.reports

    def __call__(self, graph, is_inference=False):
        gm = graph.owning_module
        if gm is None:  # a bare Graph: give it a module to be converted with
            gm = torch.fx.GraphModule(torch.nn.Module(), graph)
        stage = "dynamo" if self.stage == "pre_grad" else _aten_stage(gm, is_inference)
        self.rewriter.rewrite(gm, stage, _FAKE_KEYS[self.stage])

    def __deepcopy__(self, memo):  # inductor copies its config; the pass and its reports are one
        return self

    def uuid(self):
        digest = hashlib.sha256(repr((self.stage, sorted(self.rewriter.budgets.items()))).encode())
        for path in self.rewriter.files():
            digest.update(path.encode() + b"\0")
            with open(path, "rb") as f:
                digest.update(f.read())
        return digest.hexdigest()


def inductor_pass(script, stage="post_grad", strict=False, reload=True, script_roots=(), **budgets):
    """An inductor custom graph pass running the graft script `script` (see the module's doc).
    stage: "post_grad" (post_grad_custom_pre_pass / post_grad_custom_post_pass), "joint"
    (joint_custom_pre_pass / joint_custom_post_pass) or "pre_grad" (pre_grad_custom_pass)."""
    return InductorPass(script, stage=stage, strict=strict, reload=reload, script_roots=script_roots, **budgets)
