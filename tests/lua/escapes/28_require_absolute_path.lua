-- attack: require('/etc/passwd').
-- defense: module names are identifiers separated by dots.
-- expect: module '/etc/passwd': names are identifiers separated by dots
return require("/etc/passwd")
