"""Where every tensor of a GraphModule lives, and the smallest arena that holds them:
graft.plan_memory, the engine's liveness analysis and planner on a GraphModule in memory.

    plan = graft.plan_memory(gm)              # the graph's tensor meta gives the sizes
    plan["arena"], plan["lower_bound"]        # bytes; the lower bound is the live peak
    plan["peak_node"], [plan["tensors"][i]["node"] for i in plan["live_at_peak"]]

The sizes come from the nodes' tensor meta (`val`, `tensor_meta`, graft's own; graft.propagate_meta
computes it without running the model). Nothing is edited.
"""
from typing import Any, Dict, Optional

from torch.fx import GraphModule

from . import _native
from .convert import FxModule
from .errors import GraftValueError
from .operator_schemas import registered_schemas

__all__ = ["PLANNERS", "plan_memory"]

PLANNERS = ("best", "size", "breadth", "lifetime", "refine", "exact")
_INT64_MAX = 2**63 - 1


def plan_memory(gm: GraphModule, planner: str = "best", alignment: int = 64, *, plan_inputs: bool = False,
                plan_parameters: bool = False, plan_outputs: bool = True,
                symbols: Optional[Dict[str, int]] = None) -> Dict[str, Any]:
    """Plans an arena for the tensors `gm`'s nodes create, as `graft plan` and Lua's
    g:plan_memory do. `planner`: best (default), size, breadth, lifetime, refine or exact;
    `alignment`: every offset a multiple of it (a power of two); `plan_inputs`,
    `plan_parameters`, `plan_outputs`: which tensors the arena holds besides intermediates;
    `symbols`: values for symbolic sizes ({"s0": 32}). Returns {arena, lower_bound, gap_percent,
    fragmentation, alignment, planner, optimal, peak_step, peak_node, runs, tensors,
    live_at_peak, without_meta}: `tensors` one {node, element, bytes, first, last, kind, offset} per storage
    (steps and indices from 0, `offset` None when not in the arena), and `without_meta`: the
    call nodes whose value has no tensor meta, counted as allocating nothing (run
    graft.propagate_meta first). A bad argument raises GraftValueError; a graph the analysis
    cannot read raises GraftError naming the node."""
    if not isinstance(gm, GraphModule):
        raise GraftValueError(f"plan_memory: expected a torch.fx.GraphModule, not a {type(gm).__name__}")
    if planner not in PLANNERS:
        raise GraftValueError(f"plan_memory: unknown planner {planner!r} ({', '.join(PLANNERS)})")
    if isinstance(alignment, bool) or not isinstance(alignment, int) or alignment < 1 or alignment & (alignment - 1) \
            or alignment > 2**30:
        raise GraftValueError(f"plan_memory: alignment {alignment!r} is not a power of two up to 2**30 (1 GiB)")
    symbols = dict(symbols or {})
    for name, value in symbols.items():
        if not isinstance(name, str) or isinstance(value, bool) or not isinstance(value, int):
            raise GraftValueError(f"plan_memory: symbols maps names to ints, as {{'s0': 32}}, not {name!r}: {value!r}")
        if not -_INT64_MAX - 1 <= value <= _INT64_MAX:
            raise GraftValueError(f"plan_memory: symbol {name!r} is {value}, beyond a 64-bit size")
    module = FxModule(gm)
    return _native.plan_memory(module.native, planner, alignment, plan_inputs, plan_parameters, plan_outputs,
                               symbols, registered_schemas())
