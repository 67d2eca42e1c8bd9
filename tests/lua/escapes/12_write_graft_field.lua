-- attack: graft.x = ... / graft.pipeline = ...: write into the shared graft module.
-- defense: graft is a read-only view.
-- expect: attempt to modify read-only table 'graft'
graft.x = 1
