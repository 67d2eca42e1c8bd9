"""An ExportedProgram around an edited copy of its graph: the signature, state dict, constants
and module call graph made to agree with what the graph now is.

A rewrite keeps the program's inputs (placeholders, in order) and the number of its outputs;
an output may now be another node (its name changes in the signature and the module call
graph). Tensors a replacement reads with get_attr (torch.export allows none at the top level)
become inputs: a Parameter as a PARAMETER in the state dict, any other tensor as a
CONSTANT_TENSOR. Nodes without a fake value get one from their op's fake implementation.
"""
import copy
import dataclasses
import re

import torch
from torch.export import graph_signature as gs
from torch.export.exported_program import ExportedProgram

from .fake_values import fill_fake_values, graph_fake_mode

__all__ = ["ProgramError", "export_program", "flat_inputs", "program_signature", "rebuild_program"]

# what `meta.decompositions` of a graph file exported with --core-aten says
CORE_ATEN = "core_aten"


class ProgramError(ValueError):
    """The edited graph cannot be the graph of an ExportedProgram."""


def export_program(model, inputs, decompositions=None):
    """`torch.export.export(model, inputs)`, and with decompositions="core_aten" the program
    after `run_decompositions()` (torch's core ATen opset): the program a graph file's meta
    (`mode` "export", `decompositions`) says it was written from."""
    if decompositions not in (None, CORE_ATEN):
        raise ValueError(f"unknown decompositions {decompositions!r} (expected {CORE_ATEN!r} or none)")
    ep = torch.export.export(model, tuple(inputs))
    return ep.run_decompositions() if decompositions == CORE_ATEN else ep


def _outputs(gm):
    [out] = [n for n in gm.graph.nodes if n.op == "output"]
    values = out.args[0]
    return list(values) if isinstance(values, (list, tuple)) else [values]


def _keep_traced_values(ep, gm):
    """Nodes of `gm` that are the program's own (same name, op and target) and have no fake
    value take the one torch.export traced (a graph read back from a file has none)."""
    traced = {n.name: n for n in ep.graph.nodes}
    for node in gm.graph.nodes:
        mine = traced.get(node.name)
        if "val" not in node.meta and mine is not None and mine.op == node.op and mine.target == node.target \
                and "val" in mine.meta:
            node.meta["val"] = mine.meta["val"]


def _renamed_argument(arg, new):
    """The signature argument `arg` for the output value `new` (a node or a constant)."""
    if not isinstance(new, torch.fx.Node):
        return gs.ConstantArgument(name=getattr(arg, "name", ""), value=new)
    if hasattr(arg, "name") and not isinstance(arg, gs.ConstantArgument):
        return dataclasses.replace(arg, name=new.name)
    return gs.TensorArgument(name=new.name)


def _new_input(gm, at, name):
    """A placeholder made the `at`-th input (placeholders are in the signature's order)."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if at < len(placeholders):
        where = gm.graph.inserting_before(placeholders[at])
    elif placeholders:
        where = gm.graph.inserting_after(placeholders[-1])
    else:
        where = gm.graph.inserting_before(next(iter(gm.graph.nodes)))
    with where:
        return gm.graph.placeholder(name)


def _lift_tensor_attributes(gm, input_specs, state_dict, constants, mode):
    """Top-level get_attr nodes of tensors become inputs, after the other lifted ones and before
    the user's."""
    at = sum(1 for s in input_specs if s.kind != gs.InputKind.USER_INPUT)
    lifted = {}
    for node in list(gm.graph.nodes):
        if node.op != "get_attr":
            continue
        owner, _, name = node.target.rpartition(".")
        value = getattr(gm.get_submodule(owner), name)
        if not isinstance(value, torch.Tensor):
            continue
        if node.target not in lifted:
            parameter = isinstance(value, torch.nn.Parameter)
            prefix = "p_" if parameter else "c_"
            placeholder = _new_input(gm, at, prefix + re.sub(r"\W", "_", node.target))
            placeholder.meta["val"] = mode.from_tensor(value, static_shapes=True) if mode is not None else value
            kind = gs.InputKind.PARAMETER if parameter else gs.InputKind.CONSTANT_TENSOR
            input_specs.insert(at, gs.InputSpec(kind=kind, arg=gs.TensorArgument(name=placeholder.name),
                                                target=node.target))
            at += 1
            (state_dict if parameter else constants)[node.target] = value
            lifted[node.target] = placeholder
        node.replace_all_uses_with(lifted[node.target])
        gm.graph.erase_node(node)
    for target in lifted:
        owner, _, name = target.rpartition(".")
        delattr(gm.get_submodule(owner), name)


def flat_inputs(ep, user_inputs):
    """What the program's graph takes, in its placeholders' order: copies of its parameters,
    buffers and constants, then the user's inputs."""
    users = iter(user_inputs)
    flat = []
    for spec in ep.graph_signature.input_specs:
        if spec.kind == gs.InputKind.USER_INPUT:
            flat.append(next(users))
        elif spec.target in ep.state_dict:
            flat.append(ep.state_dict[spec.target].detach().clone())
        else:
            value = ep.constants[spec.target]
            flat.append(value.detach().clone() if isinstance(value, torch.Tensor) else value)
    return flat


def program_signature(ep):
    """The program's signature as a graph file's meta records it (for people and scripts: the
    kind of each input and output; import rebuilds the program from the model, not from this)."""
    def spec(s):
        return {"kind": s.kind.name, "name": getattr(s.arg, "name", ""), "target": s.target}
    return {"inputs": [spec(s) for s in ep.graph_signature.input_specs],
            "outputs": [spec(s) for s in ep.graph_signature.output_specs]}


def rebuild_program(ep, gm):
    """A new ExportedProgram of `ep` whose graph is `gm` (an edited copy of ep.graph_module whose
    placeholders keep their names and order). Raises ProgramError naming what does not fit; `ep`
    itself never changes."""
    before = [n.name for n in ep.graph.nodes if n.op == "placeholder"]
    now = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    if now != before:
        raise ProgramError(f"the rewrite changed the program's inputs ({', '.join(before)} -> {', '.join(now)}); "
                           "an ExportedProgram's placeholders are its signature's inputs: keep them")
    old_specs = ep.graph_signature.output_specs
    outputs = _outputs(gm)
    if len(outputs) != len(old_specs):
        raise ProgramError(f"the rewrite changed the number of the program's outputs ({len(old_specs)} -> "
                           f"{len(outputs)}); its signature names each one")
    input_specs = list(copy.deepcopy(ep.graph_signature.input_specs))
    state_dict, constants = dict(ep.state_dict), dict(ep.constants)
    _keep_traced_values(ep, gm)
    mode = graph_fake_mode(ep.graph_module, "val")
    _lift_tensor_attributes(gm, input_specs, state_dict, constants, mode)
    renamed = {}
    output_specs = []
    for spec, new in zip(old_specs, outputs):
        arg = _renamed_argument(spec.arg, new)
        if getattr(spec.arg, "name", None) != getattr(arg, "name", None):
            renamed[spec.arg.name] = arg.name
        output_specs.append(gs.OutputSpec(kind=spec.kind, arg=arg, target=spec.target))
    module_call_graph = copy.deepcopy(ep.module_call_graph)
    for entry in module_call_graph:
        if entry.signature is not None:
            for arg in (*entry.signature.inputs, *entry.signature.outputs):
                if getattr(arg, "name", None) in renamed:
                    arg.name = renamed[arg.name]
    if mode is not None:
        fill_fake_values(gm, "val", mode)
    gm.graph.lint()
    gm.recompile()
    try:
        return ExportedProgram(root=gm, graph=gm.graph,
                               graph_signature=gs.ExportGraphSignature(input_specs=input_specs,
                                                                       output_specs=output_specs),
                               state_dict=state_dict, range_constraints=copy.copy(ep.range_constraints),
                               module_call_graph=module_call_graph, example_inputs=ep.example_inputs,
                               constants=constants, verifiers=ep.verifiers)
    except Exception as e:  # noqa: BLE001 - torch's verifier raises several kinds
        raise ProgramError(f"the rewritten graph is not a valid ExportedProgram: {type(e).__name__}: {e}") from e
