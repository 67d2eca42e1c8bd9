"""graft as a torch.compile backend: a graft script rewrites every graph the compiler makes.

    compiled = torch.compile(model, backend=graft.backend("rules.lua"))                 # then inductor
    compiled = torch.compile(model, backend=graft.backend("rules.lua", then="eager"))
    compiled = torch.compile(model, backend=graft.backend("aten_rules.lua", aot=True))  # ATen graphs

Without `aot`, the script sees dynamo's graphs (Torch IR: torch.*, operator.*, methods; a
graph break makes several) and the result goes to `then`: a backend's name ("inductor",
"eager", "aot_eager", ...) or a backend callable. With `aot=True` it sees the ATen graphs AOT
autograd makes (functionalised: `y[:, 0] = x[:, 0]` arrives as select_scatter, not copy_): the
forward and, when the model trains, the backward graph. Then `then="inductor"` runs the script
as inductor's post-grad custom pass; "eager" runs the graphs as they are; a callable is called
as AOT autograd's compiler of each graph.

`backend.reports` holds one GraphReport per graph (rewrites by rule, nodes, time); the same
lines go to the "graft" logger. A graph the script fails on goes on unmodified, with a
GraftCompileWarning; `strict=True` raises instead (torch.compile reports it as a
BackendCompilerFailed).
"""
import torch

from .graph_rewrite import GraphRewriter

__all__ = ["Backend", "backend"]


def _check_then(then, aot):
    if callable(then):
        return
    if not isinstance(then, str):
        raise TypeError(f"graft.backend: then={then!r} is neither a backend's name nor a callable")
    if aot:
        if then not in ("inductor", "eager"):
            raise ValueError(f"graft.backend: with aot=True the graphs are ATen after AOT autograd: then must be "
                             f"'inductor', 'eager' or a compiler callable taking (gm, example_inputs), not {then!r}")
        return
    known = torch._dynamo.list_backends(exclude_tags=())
    if then not in known:
        raise ValueError(f"graft.backend: then={then!r} is not a torch.compile backend (known: {', '.join(known)})")


class Backend:
    """The backend callable graft.backend returns (torch.compile calls it once per graph)."""

    def __init__(self, script, then="inductor", aot=False, strict=False, reload=True, script_roots=(),
                 decompositions=None, **budgets):
        _check_then(then, aot)
        self.then, self.aot, self.decompositions = then, aot, decompositions
        self.rewriter = GraphRewriter(script, strict=strict, reload=reload, script_roots=script_roots, **budgets)

    @property
    def reports(self):
        """One GraphReport per graph graft was given, in order."""
        return self.rewriter.reports

    def summary(self):
        """The reports, a line per graph."""
        return self.rewriter.summary()

    def __call__(self, gm, example_inputs, **kwargs):
        if self.aot:
            return self._compile_aot(gm, example_inputs, **kwargs)
        self.rewriter.rewrite(gm, "dynamo", "example_value", example_inputs)
        if callable(self.then):
            return self.then(gm, example_inputs, **kwargs)
        return torch._dynamo.lookup_backend(self.then)(gm, example_inputs, **kwargs)

    def _compile_aot(self, gm, example_inputs, mode=None, options=None):
        if self.then == "inductor":
            from torch._inductor import config
            from torch._inductor.compile_fx import compile_fx
            from torch._inductor.custom_graph_pass import get_custom_graph_passes

            from .inductor_hooks import InductorPass
            patches = dict(options or {})
            if mode is not None:
                patches.update(torch._inductor.list_mode_options(mode))
            theirs = patches.get("post_grad_custom_post_pass", config.post_grad_custom_post_pass)
            patches["post_grad_custom_post_pass"] = [*get_custom_graph_passes(theirs),
                                                     InductorPass(rewriter=self.rewriter)]
            return compile_fx(gm, example_inputs, config_patches=patches, decompositions=self.decompositions)
        from functorch.compile import make_boxed_func
        from torch._dynamo.backends.common import aot_autograd

        def compiler(stage):
            def compile_graph(aten_gm, aten_inputs):
                self.rewriter.rewrite(aten_gm, stage, "val", aten_inputs)
                inner = aten_gm.forward if self.then == "eager" else self.then(aten_gm, aten_inputs)
                return inner if getattr(inner, "_boxed_call", False) else make_boxed_func(inner)
            return compile_graph

        aot = aot_autograd(fw_compiler=compiler("forward"), bw_compiler=compiler("backward"),
                           inference_compiler=compiler("inference"), keep_inference_input_mutations=True,
                           decompositions=self.decompositions)
        return aot(gm, example_inputs)


def backend(script, then="inductor", *, aot=False, strict=False, reload=True, script_roots=(), decompositions=None,
            **budgets):
    """A torch.compile backend running the graft script `script` on each graph (see the module's
    doc). then: a backend's name or callable; aot: rewrite the ATen graphs after AOT autograd;
    strict: raise when the script fails instead of compiling the graph unmodified; reload:
    reload the script when it is saved (a broken save keeps the last good version);
    decompositions: AOT autograd's decomposition table (aot=True); budgets as graft.run's."""
    return Backend(script, then=then, aot=aot, strict=strict, reload=reload, script_roots=script_roots,
                   decompositions=decompositions, **budgets)
