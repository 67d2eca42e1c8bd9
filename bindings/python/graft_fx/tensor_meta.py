"""Run a GraphModule on example inputs and describe every node's value (FORMAT.md §2.1)."""
import torch
import torch.fx


def describe_tensor(t):
    def dim(d):
        return d if isinstance(d, int) else str(d)  # symbolic sizes are written by name
    return {"shape": [dim(d) for d in t.shape], "dtype": str(t.dtype)[len("torch."):],
            "stride": [dim(d) for d in t.stride()], "device": str(t.device)}


def _has_tensor(value):
    if isinstance(value, torch.Tensor):
        return True
    return isinstance(value, (tuple, list)) and any(_has_tensor(v) for v in value)


def describe(value):
    """A tensor description, an array of them (null for non-tensors), or None when no tensor."""
    if not _has_tensor(value):
        return None
    if isinstance(value, torch.Tensor):
        return describe_tensor(value)
    return [describe(v) for v in value]


class _Recorder(torch.fx.Interpreter):
    def __init__(self, gm):
        super().__init__(gm)
        self.described = {}

    def run_node(self, n):
        result = super().run_node(n)
        self.described[n.name] = describe(result)
        return result


def record(gm, example_inputs):
    """{node name: description or None} from running `gm` on `example_inputs`."""
    recorder = _Recorder(gm)
    with torch.no_grad():
        recorder.run(*example_inputs)
    return recorder.described
