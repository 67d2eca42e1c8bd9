"""Where the shipped rule sets fire on torchvision's models, in every form torch 2.14 makes of a
model: the table in scripts/README.md.

    tools/python tools/rule_forms.py                      # every model and form (about two minutes)
    tools/python tools/rule_forms.py --models resnet18 --forms dynamo,fx

Each cell is a rule set's rewrites summed over its rules (and, under torch.compile, over the
graphs dynamo made), with the model in eval mode under no_grad, input 1x3x224x224, seed 0.
tests/python/test_rule_forms.py checks the ResNet-18 column of the README against this.
"""
import argparse
import contextlib
import io
import os
import sys

import torch

import graft
from graft_fx.models import build_model
from graft_fx.trace import decomposition_table, trace_aten

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES = os.path.join(REPO, "scripts", "rules")
PIPELINES = os.path.join(REPO, "scripts", "pipelines")
MODELS = ("resnet18", "mobilenet_v3_small", "vit_b_16", "swin_t", "convnext_tiny")
# form -> the script of each rule family in that form (None: the family has no rule there)
FAMILIES = ("linear + activation", "attention", "convolution + batch norm")
FORMS = {
    "make_fx": ("linear_act_aten.lua", "fuse_attention.lua", "conv_bn_aten.lua"),
    "export": ("linear_act_aten.lua", "fuse_attention.lua", "conv_bn_aten.lua"),
    "core_aten": ("linear_act_aten.lua", "fuse_attention.lua", "conv_bn_aten.lua"),
    "aot": ("linear_act_aten.lua", "fuse_attention.lua", "conv_bn_aten.lua"),
    "dynamo": ("linear_act_torch.lua", "sdpa_bias_torch.lua", "conv_bn_torch.lua"),
    "fx": ("linear_act_fx.lua", "vit_mha_fx.lua", "conv_bn_fx.lua"),
}
FORM_NAMES = {
    "make_fx": "make_fx (`graft_fx export --mode aten`)",
    "export": "`torch.export` (default graph)",
    "core_aten": "core ATen (`run_decompositions()`)",
    "aot": "AOT inference (`graft.backend(aot=True)`)",
    "dynamo": "dynamo (`graft.backend`)",
    "fx": "FX (`symbolic_trace`)",
}
# make_fx traces torch 2's attention as one kernel call; its decomposition is what sdpa_aten fuses
FLASH = "aten._scaled_dot_product_flash_attention_for_cpu"


def script_path(name):
    return os.path.join(PIPELINES if name == "fuse_attention.lua" else RULES, name)


def report_rewrites(report):
    return sum(r.get("rewrites", 0) for p in report["passes"] for r in p.get("rules", []))


def compiled_rewrites(model, x, script, aot):
    torch._dynamo.reset()
    backend = graft.backend(script, then="eager", aot=aot, strict=True)
    with torch.no_grad():
        torch.compile(model, backend=backend)(x)
    return sum(sum(r.rewrites.values()) for r in backend.reports)


def count(model, x, form, script):
    """The rewrites of `script` on the model's graph in `form`."""
    if form == "make_fx":
        gm = trace_aten(model, (x,), decomposition_table([FLASH]))
        return report_rewrites(graft.run(script, gm)[1])
    if form in ("export", "core_aten"):
        ep = torch.export.export(model, (x,))
        if form == "core_aten":
            ep = ep.run_decompositions()
        return report_rewrites(graft.export.run(script, ep)[1])
    if form == "fx":
        return report_rewrites(graft.run(script, torch.fx.symbolic_trace(model))[1])
    return compiled_rewrites(model, x, script, aot=form == "aot")


def table(models, forms, log=sys.stderr):
    """{(family, form): {model: rewrites}}"""
    cells = {}
    for name in models:
        model = build_model(f"torchvision.models.{name}", 0)
        torch.manual_seed(0)
        x = torch.randn(1, 3, 224, 224)
        for form in forms:
            for family, script in zip(FAMILIES, FORMS[form]):
                with contextlib.redirect_stdout(io.StringIO()):  # the pipelines' own prints
                    n = count(model, x, form, script_path(script))
                cells.setdefault((family, form), {})[name] = n
                print(f"{name} {form} {script}: {n}", file=log)
    return cells


def markdown(cells, models, forms):
    lines = ["| rules | form | " + " | ".join(models) + " |", "|---|---|" + "---:|" * len(models)]
    for family in FAMILIES:
        for form in forms:
            script = FORMS[form][FAMILIES.index(family)]
            row = cells[(family, form)]
            lines.append(f"| `{script[:-4]}` | {FORM_NAMES[form]} | " + " | ".join(str(row[m]) for m in models) + " |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(prog="tools/rule_forms.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default=",".join(MODELS), help=f"comma-separated (default {','.join(MODELS)})")
    p.add_argument("--forms", default=",".join(FORMS), help=f"comma-separated (default {','.join(FORMS)})")
    args = p.parse_args(argv)
    models, forms = args.models.split(","), args.forms.split(",")
    for form in forms:
        if form not in FORMS:
            p.error(f"unknown form {form!r} (forms: {', '.join(FORMS)})")
    print(markdown(table(models, forms), models, forms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
