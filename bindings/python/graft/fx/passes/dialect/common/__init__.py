"""torch.fx.passes.dialect.common under graft.fx."""
