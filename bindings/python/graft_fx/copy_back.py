"""Running a functionalised graph as the original ran: graft's functionalisation returns each
graph input (or module tensor) it found written as an extra output, first, and records them in
the output node's meta `mutated_inputs`:

    {"copy_back": [{"input": "x", "output": 0}, {"attribute": "bn.running_mean", "output": 1}],
     "user_output": "single" | "tuple"}

`with_copy_back(gm)` wraps such a GraphModule so that a call writes those values back into the
caller's tensors and returns only the graph's own outputs, as the unfunctionalised graph did."""
import torch

RECORD_KEY = "mutated_inputs"


def copy_back_record(gm):
    """The output node's `mutated_inputs` record, or None."""
    for node in gm.graph.nodes:
        if node.op == "output":
            return node.meta.get(RECORD_KEY)
    return None


class CopyBack(torch.nn.Module):
    """Calls `gm`, copies the written inputs' new values into them, returns the rest."""

    def __init__(self, gm, record):
        super().__init__()
        self.gm = gm
        self.record = record
        self.placeholders = [n.name for n in gm.graph.nodes if n.op == "placeholder"]

    def target(self, copy):
        if "input" in copy:
            return self.args_[self.placeholders.index(copy["input"])]
        owner, _, name = copy["attribute"].rpartition(".")
        return getattr(self.gm.get_submodule(owner) if owner else self.gm, name)

    def forward(self, *args):
        self.args_ = args
        result = list(self.gm(*args))
        copies = self.record["copy_back"]
        written = [self.target(c) for c in copies]
        storages = {t.untyped_storage().data_ptr() for t in written} if hasattr(torch.Tensor, "untyped_storage") \
            else {t.storage().data_ptr() for t in written}

        def shares(v):
            if not isinstance(v, torch.Tensor):
                return False
            s = v.untyped_storage() if hasattr(v, "untyped_storage") else v.storage()
            return s.data_ptr() in storages

        # PyTorch may hand back an input's own storage for a functional call (aten.copy returns
        # its source when nothing changes): values that share a written tensor's storage are
        # copied first, so writing back cannot change them.
        result = [v.clone() if shares(v) else v for v in result]
        with torch.no_grad():
            for c, t in zip(copies, written):
                t.copy_(result[c["output"]])
        self.args_ = None
        rest = tuple(result[len(copies):])
        return rest if self.record["user_output"] == "tuple" else rest[0]


def with_copy_back(gm):
    """`gm` itself when it records no written inputs, else a module that copies them back."""
    record = copy_back_record(gm)
    return gm if not record else CopyBack(gm, record)
