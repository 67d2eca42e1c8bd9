-- attack: require('..evil'): climb out of the module roots.
-- defense: module names are identifiers separated by dots.
-- expect: module '..evil': names are identifiers separated by dots
return require("..evil")
