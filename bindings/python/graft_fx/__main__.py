"""python3 -m graft_fx export|import: the command-line bridge."""
import argparse
import io
import sys

import torch

from . import format as fmt
from .export import export_graph_module, export_hierarchy, trace_aten, trace_symbolic
from .exported_program import CORE_ATEN, ProgramError, export_program, flat_inputs, program_signature, rebuild_program
from .hierarchy import ExtractionError
from .trace import check_leaves, decomposition_table
from .importer import GraftImportError, import_graph
from .trust import trust_module
from .models import ModelSpecError, build_model, example_inputs, run_as_traced
from .output import OutputError, check_output_path, write_output

DEFAULT_SHAPE = [1, 3, 224, 224]


def _shape(text):
    try:
        dims = [int(d) for d in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad shape {text!r}: expected ints like 1,3,224,224")
    if not dims or any(d < 0 for d in dims):
        raise argparse.ArgumentTypeError(f"bad shape {text!r}")
    return dims


def _dtype(text):
    value = getattr(torch, text.replace("torch.", ""), None)
    if not isinstance(value, torch.dtype):
        raise argparse.ArgumentTypeError(f"bad dtype {text!r}: expected a torch dtype such as float32, int64, bool")
    return value


def _common(p):
    p.add_argument("--seed", type=int, default=0, help="torch.manual_seed for model and input (0)")
    p.add_argument("--input-shape", type=_shape, action="append", metavar="D,D,...",
                   help="shape of one example input; repeat for several (default 1,3,224,224)")
    p.add_argument("--input-dtype", type=_dtype, action="append", metavar="DTYPE",
                   help="dtype of the example inputs (float32, int64 for token ids, bool, ...): one for all, "
                        "or one per --input-shape (default float32)")
    p.add_argument("--int-high", type=int, default=2, metavar="N",
                   help="integer inputs are drawn from [0, N) (default 2: valid ids for any embedding)")


def _parser():
    parser = argparse.ArgumentParser(prog="python3 -m graft_fx",
                                     description="torch.fx <-> graft graph JSON bridge")
    sub = parser.add_subparsers(dest="command", required=True)
    e = sub.add_parser("export", help="trace a model and write its graph file",
                       description="Trace MODEL and write its graph file (docs/FORMAT.md).")
    e.add_argument("model", metavar="MODEL",
                   help="factory: dotted path (torchvision.models.resnet18) or file.py:factory")
    e.add_argument("-o", "--output", required=True, metavar="OUT.json")
    e.add_argument("--mode", choices=("symbolic", "aten", "export"), default="symbolic",
                   help="symbolic: torch.fx.symbolic_trace; aten: make_fx; export: torch.export.export, the "
                        "program's graph (parameters, buffers and constants are inputs; import rebuilds the "
                        "ExportedProgram) (default symbolic)")
    e.add_argument("--leaf", action="append", default=[], metavar="CLASS",
                   help="with --mode symbolic: keep modules of this class (name or module.Class) as call_module "
                        "nodes instead of tracing through them; repeatable")
    e.add_argument("--hierarchy", action="store_true",
                   help="with --mode symbolic: one graph per submodule (in the module table, under the module's "
                        "path), an opaque module where tracing fails (the reason recorded), and one instance "
                        "per call of a module called more than once (linear.0, linear.1)")
    e.add_argument("--strict", action="store_true",
                   help="with --hierarchy: a submodule that cannot be traced is an error showing the trace's "
                        "exception, instead of an opaque module")
    e.add_argument("--decompose", action="append", default=[], metavar="OP",
                   help="with --mode aten: trace this ATen operator (aten._scaled_dot_product_flash_attention_for_cpu) "
                        "as the operators torch's own decomposition of it calls; repeatable")
    e.add_argument("--core-aten", action="store_true",
                   help="with --mode export: the program after run_decompositions(), in torch's core ATen opset "
                        "(as a backend receives it); import and graft verify decompose again")
    e.add_argument("--drop-meta", action="append", default=[], metavar="KEY",
                   help="leave this free-form node meta key out of the file (stack_trace, nn_module_stack: the "
                        "provenance that makes up most of an exported program's size); repeatable")
    e.add_argument("--values", action="store_true",
                   help="also write every parameter's and buffer's value (module settings are always written), "
                        "so that import can rebuild modules the target model lacks (export replacements with it)")
    _common(e)
    i = sub.add_parser("import", help="rebuild a GraphModule from a graph file",
                       description="Import GRAPH onto a freshly built MODEL.")
    i.add_argument("graph", metavar="GRAPH.json")
    i.add_argument("--model", required=True, metavar="MODEL", help="the model the graph came from")
    i.add_argument("--check", action="store_true",
                   help="run model and imported graph on one seeded input of the shapes the file records "
                        "(meta.input_shapes; --input-shape overrides them); exit 1 if the outputs differ")
    i.add_argument("-o", "--output", metavar="OUT.pt",
                   help="torch.save the GraphModule here; for a graph exported with --mode export, "
                        "torch.export.save the rebuilt ExportedProgram (a .pt2 archive)")
    i.add_argument("--trust-module", action="append", default=[], metavar="MODULE",
                   help="let the file name functions and module classes of MODULE (graft resolves only torch's, "
                        "torchvision's, graft_fx's, operator's and math's on a file's word; repeatable)")
    _common(i)
    return parser


def _export(args):
    check_output_path(args.output)  # a folder or a missing folder fails before the trace
    model = build_model(args.model, args.seed)
    inputs = example_inputs(args.input_shape or [DEFAULT_SHAPE], args.seed, args.input_dtype, args.int_high)
    if args.leaf and args.mode != "symbolic":
        raise GraftTraceError("--leaf keeps modules in a module-level graph: use it with --mode symbolic "
                              "(make_fx traces every module down to ATen operators)")
    if (args.hierarchy or args.strict) and args.mode != "symbolic":
        raise GraftTraceError("--hierarchy keeps modules as graphs of their own: use it with --mode symbolic "
                              "(make_fx traces every module down to ATen operators)")
    if args.core_aten and args.mode != "export":
        raise GraftTraceError("--core-aten decomposes an ExportedProgram: use it with --mode export")
    if args.decompose and args.mode != "aten":
        raise GraftTraceError("--decompose names ATen operators: use it with --mode aten")
    try:
        decompositions = decomposition_table(args.decompose)
    except ValueError as e:
        raise GraftTraceError(f"--decompose {e}") from None
    if args.strict and not args.hierarchy:
        raise GraftTraceError("--strict is an option of --hierarchy (without it, any trace failure is an error)")
    if args.hierarchy:
        return _export_hierarchy(args, model, inputs)
    if args.mode == "export":
        return _export_program(args, model, inputs)
    try:
        gm = trace_symbolic(model, args.leaf) if args.mode == "symbolic" else trace_aten(model, inputs, decompositions)
    except ValueError as e:
        if str(e).startswith("--leaf "):
            raise GraftTraceError(str(e)) from None
        raise GraftTraceError(_trace_failure(args, e)) from None
    except Exception as e:  # noqa: BLE001 - any tracing failure becomes one clear sentence
        raise GraftTraceError(_trace_failure(args, e)) from None
    meta = {"source": args.model, "mode": args.mode, "seed": args.seed}
    if args.decompose:
        meta["decomposed"] = list(args.decompose)
    doc = export_graph_module(gm, root_module=model, example_inputs=inputs, meta=meta, values=args.values)
    _drop_meta(doc, args.drop_meta)
    fmt.write(doc, args.output)
    print(f"wrote {args.output}: {len(doc['nodes'])} nodes, {len(doc['modules'])} modules",
          file=sys.stderr if args.output == "-" else sys.stdout)
    return 0


def _drop_meta(doc, keys):
    """Remove the free-form meta `keys` from every node of the document, subgraphs included."""
    if not keys:
        return
    if isinstance(doc, dict):
        for node in doc.get("nodes", []) if isinstance(doc.get("nodes"), list) else []:
            for key in keys:
                node.get("meta", {}).pop(key, None)
        for value in doc.values():
            _drop_meta(value, keys)
    elif isinstance(doc, list):
        for value in doc:
            _drop_meta(value, keys)


def _export_program(args, model, inputs):
    try:
        ep = export_program(model, inputs, CORE_ATEN if args.core_aten else None)
    except Exception as e:  # noqa: BLE001 - any export failure becomes one clear sentence
        raise GraftTraceError(_trace_failure(args, e)) from None
    meta = {"source": args.model, "mode": args.mode, "seed": args.seed,
            "program": program_signature(ep)}
    if args.core_aten:
        meta["decompositions"] = CORE_ATEN
    doc = export_graph_module(ep.graph_module, root_module=ep.graph_module, example_inputs=flat_inputs(ep, inputs),
                              meta=meta, values=args.values)
    doc["meta"]["input_shapes"] = [list(x.shape) for x in inputs]  # the user's: what import exports again with
    _drop_meta(doc, args.drop_meta)
    fmt.write(doc, args.output)
    print(f"wrote {args.output}: {len(doc['nodes'])} nodes, an ExportedProgram's graph "
          f"({len(ep.graph_signature.input_specs)} inputs, {len(inputs)} of them the user's)",
          file=sys.stderr if args.output == "-" else sys.stdout)
    return 0


def _export_hierarchy(args, model, inputs):
    try:
        check_leaves(model, args.leaf)
    except ValueError as e:
        raise GraftTraceError(str(e)) from None
    try:
        doc = export_hierarchy(model, inputs, meta={"source": args.model, "mode": args.mode, "seed": args.seed},
                               values=args.values, leaves=args.leaf, strict=args.strict)
    except ExtractionError as e:
        import traceback
        cause = "".join(traceback.format_exception(e.__cause__)) if e.__cause__ else ""
        raise GraftTraceError(f"{e}{_user_frame(e.__cause__)}\n\nthe trace's exception:\n{cause.rstrip()}") from None
    _drop_meta(doc, args.drop_meta)
    fmt.write(doc, args.output)
    graphs = sum(1 for m in doc["modules"] if "graph" in m)
    opaque = [m["path"] for m in doc["modules"] if "opaque" in m]
    log = sys.stderr if args.output == "-" else sys.stdout
    print(f"wrote {args.output}: {len(doc['nodes'])} nodes, {len(doc['modules'])} modules, {graphs} submodule graphs"
          + (f", {len(opaque)} opaque ({', '.join(opaque[:5])}{', ...' if len(opaque) > 5 else ''})" if opaque else ""),
          file=log)
    return 0


def _user_frame(error):
    """ at file:line (code) of the innermost frame outside torch and graft_fx, or ''."""
    import traceback
    if error is None:
        return ""
    own = [f for f in traceback.extract_tb(error.__traceback__)
           if "/torch/" not in f.filename and "/graft_fx/" not in f.filename]
    return f" at {own[-1].filename}:{own[-1].lineno} ({own[-1].line})" if own else ""


class GraftTraceError(Exception):
    """The model could not be traced."""


def _trace_failure(args, error):
    """What failed, where in the model's own code, and what to try."""
    where = _user_frame(error)
    first = (str(error).strip().splitlines() or [type(error).__name__])[0]
    how = {"symbolic": "torch.fx.symbolic_trace", "aten": "make_fx", "export": "torch.export.export"}[args.mode]
    hint = ("; data-dependent control flow cannot be traced symbolically: try --mode aten"
            if args.mode == "symbolic" else "; check --input-shape and --input-dtype match what the model expects")
    return f"cannot trace {args.model} with {how}{where}: {type(error).__name__}: {first}{hint}"


def _same(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, (tuple, list)):
        return type(a) == type(b) and len(a) == len(b) and all(map(_same, a, b))
    return a == b


def _describe_shapes(shapes):
    return ", ".join("x".join(str(d) for d in shape) if shape else "a 0-dim tensor" for shape in shapes)


def _placeholders(doc):
    """(name, tensor_meta or None) of each placeholder of the root graph, in order."""
    out = []
    for n in doc["nodes"]:
        if n.get("op") == "placeholder":
            tm = (n.get("meta") or {}).get("tensor_meta")
            out.append((n["name"], tm if isinstance(tm, dict) else None))
    return out


def _recorded_input_shapes(doc, path):
    """The input shapes the file records (meta.input_shapes), checked against the graph's
    placeholders; None when the file records none."""
    recorded = doc["meta"].get("input_shapes")
    if recorded is None:
        return None
    where = f"{path}: $.meta.input_shapes"
    if not isinstance(recorded, list):
        raise GraftImportError(f"{where}: expected a list with one shape (a list of sizes) per graph input")
    for i, shape in enumerate(recorded):
        if shape is None:
            raise GraftImportError(f"{where}[{i}]: the graph's input {i} was not a tensor when it was exported, "
                                   "so --check cannot make it; give --input-shape for a graph whose inputs are all "
                                   "tensors")
        if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                                                  for d in shape):
            raise GraftImportError(f"{where}[{i}]: expected a list of sizes (non-negative integers), got {shape!r}")
    placeholders = _placeholders(doc)
    disagree = []
    if len(recorded) > len(placeholders):
        disagree.append(f"{len(recorded)} shapes for {len(placeholders)} placeholder"
                        f"{'' if len(placeholders) == 1 else 's'}")
    for i, (name, tm) in enumerate(placeholders):
        shape = tm.get("shape") if tm is not None else None
        if not isinstance(shape, list):
            continue  # nothing recorded for this input (meta stripped, or a parameter with a default)
        if i >= len(recorded):
            disagree.append(f"{name} is {shape}, the file records no shape for it")
        elif len(shape) != len(recorded[i]) or any(isinstance(d, int) and d != r for d, r in zip(shape, recorded[i])):
            disagree.append(f"{name} is {shape}, the file records {recorded[i]}")  # a symbol ("s0") fits any size
    if disagree:
        raise GraftImportError(f"{where} {recorded} disagrees with the graph's placeholders ({'; '.join(disagree)}): "
                               "one of them was edited or comes from another export, so no input is known to be "
                               "the one the graph was exported with")
    return recorded


def _check_inputs(args, doc):
    """The seeded inputs `import --check` runs both sides on, and a sentence saying where their
    shapes and dtypes come from: --input-shape and --input-dtype when given, else the shapes the file
    records (meta.input_shapes, which must agree with the placeholders' tensor_meta) and the
    placeholders' dtypes."""
    recorded = _recorded_input_shapes(doc, args.graph)
    dtypes, dtype_source = args.input_dtype, "--input-dtype"
    if args.input_shape:
        shapes = args.input_shape
        source = "--input-shape"
        if recorded is not None and [list(s) for s in shapes] != recorded:
            source += f"; the file records {_describe_shapes(recorded)}"
    elif recorded is not None:
        shapes, source = recorded, "the shapes the file records, meta.input_shapes"
    else:
        placed = [(tm or {}).get("shape") for _, tm in _placeholders(doc)]
        if placed and all(isinstance(p, list) and all(isinstance(d, int) and not isinstance(d, bool) for d in p)
                          for p in placed):
            shapes, source = placed, "the placeholders' tensor_meta; the file records no meta.input_shapes"
        else:
            shapes, source = [DEFAULT_SHAPE], "the default; the file records no input shapes"
    if dtypes is None:
        dtype_source = "float32"
        placeholders = _placeholders(doc)
        if not args.input_shape and len(placeholders) >= len(shapes):
            names = [(tm or {}).get("dtype") for _, tm in placeholders[:len(shapes)]]
            found = [getattr(torch, d, None) if isinstance(d, str) else None for d in names]
            if all(isinstance(d, torch.dtype) for d in found) and any(d != torch.float32 for d in found):
                dtypes, dtype_source = found, "the placeholders' dtypes"
    inputs = example_inputs(shapes, args.seed, dtypes, args.int_high)
    kinds = ", ".join(f"{'x'.join(str(d) for d in x.shape) or '0-dim'} {str(x.dtype)[len('torch.'):]}" for x in inputs)
    return inputs, f"check: inputs {kinds} (shapes: {source}; dtypes: {dtype_source}; seed {args.seed})"


def _import_program(args, model, doc):
    """A graph exported with --mode export: the model exported again (same seed and input
    shapes) gives the program the rewritten graph is rebuilt into."""
    log = sys.stderr if args.output == "-" else sys.stdout
    shapes = args.input_shape or doc["meta"].get("input_shapes") or [DEFAULT_SHAPE]
    inputs = example_inputs(shapes, args.seed, args.input_dtype, args.int_high)
    try:
        ep = export_program(model, inputs, doc["meta"].get("decompositions"))
    except Exception as e:  # noqa: BLE001
        raise GraftImportError(f"{args.graph}: exporting {args.model} again failed: {type(e).__name__}: {e}") from None
    gm = import_graph(doc, ep.graph_module)
    try:
        program = rebuild_program(ep, gm)
    except ProgramError as e:
        raise GraftImportError(f"{args.graph}: {e}") from None
    print(f"imported {args.graph}: {len(program.graph.nodes)} nodes, an ExportedProgram", file=log)
    status = 0
    if args.check:
        kinds = ", ".join(f"{'x'.join(str(d) for d in x.shape) or '0-dim'} {str(x.dtype)[len('torch.'):]}"
                          for x in inputs)
        print(f"check: inputs {kinds} (seed {args.seed}), the program's module against the model", file=log)
        same = _same(program.module()(*inputs), model(*inputs))
        print("check: outputs identical" if same else "check: outputs DIFFER", file=log)
        status = 0 if same else 1
    if args.output:
        buffer = io.BytesIO()
        torch.export.save(program, buffer)
        write_output(args.output, buffer.getvalue())
        print(f"saved {args.output}", file=log)
    return status


def _import(args):
    if args.output:
        check_output_path(args.output)
    model = build_model(args.model, args.seed)
    doc = fmt.read(args.graph)
    if doc["meta"].get("mode") == "export":
        return _import_program(args, model, doc)
    gm = import_graph(doc, model)
    log = sys.stderr if args.output == "-" else sys.stdout  # stdout carries the saved module
    print(f"imported {args.graph}: {len(gm.graph.nodes)} nodes", file=log)
    status = 0
    if args.check:
        inputs, said = _check_inputs(args, doc)
        print(said, file=log)
        with run_as_traced():
            try:
                actual = gm(*inputs)
            except RuntimeError as e:  # the graph does not run on this model's weights/inputs
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise GraftImportError(f"{args.graph}: the imported graph fails to run: {first}") from None
        # The model as it runs, then (for a graph exported with --decompose) as it was traced:
        # a graph whose decomposed operators were fused back computes the former.
        decomposed = doc["meta"].get("decomposed") or []
        if not isinstance(decomposed, list) or not all(isinstance(d, str) for d in decomposed):
            raise GraftImportError(f"{args.graph}: $.meta.decomposed: expected a list of ATen operator names")
        try:
            decomposition_table(decomposed)  # only ATen operators torch decomposes; nothing else is looked up
        except ValueError as e:
            raise GraftImportError(f"{args.graph}: $.meta.decomposed: {e}") from None
        how = None
        for ops in ([], decomposed) if decomposed else ([],):
            with run_as_traced(ops):
                if _same(model(*inputs), actual):
                    how = f" (the model run with {', '.join(ops)} decomposed, as exported)" if ops else ""
                    break
        print(f"check: outputs identical{how}" if how is not None else "check: outputs DIFFER", file=log)
        status = 0 if how is not None else 1
    if args.output:
        buffer = io.BytesIO()
        torch.save(gm, buffer)
        write_output(args.output, buffer.getvalue())
        print(f"saved {args.output}", file=log)
    return status


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    for module in getattr(args, "trust_module", []):
        try:
            trust_module(module)
        except ValueError as e:
            parser.error(f"--trust-module: {e}")
    try:
        return _export(args) if args.command == "export" else _import(args)
    except (fmt.GraphFormatError, GraftImportError, GraftTraceError, ModelSpecError, OutputError, OSError) as e:
        print(f"graft_fx: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
