-- Every built-in pass of the registry that edits, by name, one pipeline pass each.
return graft.pipeline{passes = {"normalize_args", "functionalize", "common_subexpression_elimination",
                                "dead_code_elimination", "reinplace", "specialize", "stable_topological_sort"}}
