"""graft.fx against the installed torch.fx: every public name of the modules graft mirrors exists
under graft.fx, with torch's signature where graft defines it.

The modules are found by walking torch.fx.passes, plus torch.fx itself and
torch.fx.subgraph_rewriter; nothing is listed by hand but the exclusions below. A module's public
names are its __all__, or else the public names it defines itself. A name graft takes from torch
as it is passes; one graft defines must take the same parameters (names, kinds and defaults) as
torch's, and so must every public method of torch's class on graft's class."""
import importlib
import inspect
import pkgutil
import sys
import types
import unittest

import torch.fx
import torch.fx.passes

from helpers import graft_module

# Module paths (and everything under them) that graft does not mirror, and why.
EXCLUDED = {
    "torch.fx.passes.tests": "torch's own unit tests, not an API",
}


def torch_modules():
    """torch.fx, torch.fx.subgraph_rewriter and every public module under torch.fx.passes."""
    names = ["torch.fx", "torch.fx.subgraph_rewriter", "torch.fx.passes"]
    for info in pkgutil.walk_packages(torch.fx.passes.__path__, "torch.fx.passes."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        if any(info.name == e or info.name.startswith(e + ".") for e in EXCLUDED):
            continue
        names.append(info.name)
    return sorted(names)


def public_names(module):
    names = getattr(module, "__all__", None)
    if names is not None:
        return sorted(names)
    return sorted(k for k, v in vars(module).items()
                  if not k.startswith("_") and getattr(v, "__module__", None) == module.__name__)


def parameters(fn):
    """(name, kind, default) of each parameter, annotations left out."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    return [(p.name, p.kind, p.default) for p in sig.parameters.values()]


def differences(torch_module, graft_module_):
    """What graft's mirror lacks or spells otherwise, as readable lines."""
    problems = []
    for name in public_names(torch_module):
        if not hasattr(graft_module_, name):
            problems.append(f"{torch_module.__name__}.{name}: missing")
            continue
        theirs, ours = getattr(torch_module, name), getattr(graft_module_, name)
        if ours is theirs:
            continue
        where = f"{torch_module.__name__}.{name}"
        if inspect.isclass(theirs):
            if not inspect.isclass(ours):
                problems.append(f"{where}: torch's is a class, graft's a {type(ours).__name__}")
                continue
            for attr, member in vars(theirs).items():
                if attr.startswith("_") and attr != "__init__" or not callable(member):
                    continue
                if not hasattr(ours, attr):
                    problems.append(f"{where}.{attr}: missing")
                elif parameters(getattr(ours, attr)) != parameters(getattr(theirs, attr)):
                    problems.append(f"{where}.{attr}: {inspect.signature(getattr(ours, attr))} "
                                    f"is not torch's {inspect.signature(getattr(theirs, attr))}")
        elif callable(theirs) and parameters(theirs) is not None and parameters(ours) != parameters(theirs):
            problems.append(f"{where}: {inspect.signature(ours)} is not torch's {inspect.signature(theirs)}")
    return problems


class Surface(unittest.TestCase):
    def setUp(self):
        graft_module(self)

    def test_every_public_name_is_there_with_torchs_signature(self):
        modules = torch_modules()
        self.assertGreater(len(modules), 30)  # the walk found torch's tree
        problems = []
        for name in modules:
            theirs = importlib.import_module(name)
            mirror = "graft" + name[len("torch"):]
            try:
                ours = importlib.import_module(mirror)
            except ImportError as e:
                problems.append(f"{name}: no module {mirror} ({e})")
                continue
            problems.extend(differences(theirs, ours))
        self.assertEqual(problems, [], "\n".join(problems))

    def test_every_other_name_resolves_too(self):
        """torch's private helpers (which torch's own tests and some passes import) and anything
        else a torch module holds resolve under graft's mirror: graft's own object where graft
        defines the name, else torch's; a submodule graft mirrors is graft's mirror."""
        problems, checked = [], 0
        for name in torch_modules():
            theirs = importlib.import_module(name)
            ours = importlib.import_module("graft" + name[len("torch"):])
            for attr, value in vars(theirs).items():
                if attr.startswith("__") and attr.endswith("__"):
                    continue
                checked += 1
                if not hasattr(ours, attr):
                    problems.append(f"{name}.{attr}: missing")
                elif isinstance(value, types.ModuleType) and value.__name__.startswith("torch.fx."):
                    mirror = "graft" + value.__name__[len("torch"):]
                    got = getattr(ours, attr)
                    if got.__name__ != mirror and mirror in sys.modules:
                        problems.append(f"{name}.{attr}: torch's module, not graft's mirror {mirror}")
        self.assertGreater(checked, 500)
        self.assertEqual(problems, [], "\n".join(problems))
        from graft.fx.passes.utils.matcher_with_name_node_map_utils import _split_to_graph_and_name_node_map
        from torch.fx.passes.utils import matcher_with_name_node_map_utils as torch_module
        self.assertIs(_split_to_graph_and_name_node_map, torch_module._split_to_graph_and_name_node_map)
        import graft.fx.passes
        self.assertEqual(graft.fx.passes.tools_common.__name__, "graft.fx.passes.tools_common")
        with self.assertRaises(ImportError):
            from graft.fx.passes.shape_prop import no_such_name  # noqa: F401

    def test_the_check_finds_a_missing_name_and_a_changed_signature(self):
        # The check itself, on a mirror made wrong on purpose: it must name both faults.
        from torch.fx.passes.utils import matcher_utils

        class Matcher(matcher_utils.SubgraphMatcher):
            def match(self, graph):  # torch's takes node_name_match too
                return []

        wrong = types.ModuleType("wrong")
        wrong.SubgraphMatcher = Matcher
        problems = differences(matcher_utils, wrong)
        self.assertIn("torch.fx.passes.utils.matcher_utils.InternalMatch: missing", problems)
        self.assertTrue(any("SubgraphMatcher.match" in p and "node_name_match" in p for p in problems), problems)


if __name__ == "__main__":
    unittest.main()
