"""torch.fx.passes.dialect under graft.fx."""
