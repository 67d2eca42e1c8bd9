-- attack: require('os'): reach a standard library through require.
-- defense: require only reads .lua files under the sandbox's roots (an evaluated snippet has none).
-- expect: module 'os' not found (this sandbox has no module roots)
return require("os")
