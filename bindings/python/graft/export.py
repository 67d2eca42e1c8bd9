"""graft scripts on torch.export's ExportedPrograms.

    ep = torch.export.export(model, (x,))
    ep2, report = graft.export.run("rules.lua", ep)
    ep2.module()(x)                       # computes what the rules say
    torch.export.save(ep2, "model.pt2")   # and saves, loads, runs like any exported program

The script runs on a copy of the program's graph (ATen, placeholders for parameters, buffers,
constants and user inputs); `ep` never changes. The result's graph signature, state dict,
constants and module call graph are made to agree with the rewritten graph
(graft_fx.exported_program), and torch's verifier checks it before it is returned.
"""
import copy
import os

from graft_fx.exported_program import ProgramError, rebuild_program

from .scripts import ScriptError, run as run_script

__all__ = ["run"]


def run(script, ep, script_roots=(), **budgets):
    """Runs the pipeline script `script` on the ExportedProgram `ep`; returns (a new
    ExportedProgram, the pipeline report). Raises ScriptError (naming the script) when the
    script fails or its result cannot be an ExportedProgram; `ep` is left as it was."""
    import torch
    if not isinstance(ep, torch.export.ExportedProgram):
        raise TypeError(f"graft.export.run takes a torch.export.ExportedProgram, not {type(ep).__name__} "
                        "(for a GraphModule use graft.run)")
    gm = copy.deepcopy(ep.graph_module)
    _, report = run_script(script, gm, script_roots=script_roots, **budgets)
    try:
        return rebuild_program(ep, gm), report
    except ProgramError as e:
        script = os.fspath(script)
        raise ScriptError(f"{script}: {e} (the ExportedProgram is unchanged)", file=script, report=report) from e
