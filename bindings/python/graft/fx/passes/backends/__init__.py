"""torch.fx.passes.backends under graft.fx."""
