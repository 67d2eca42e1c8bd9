---@meta graft
-- LuaLS annotations of the API graft scripts see (docs/reference/lua.md is the reference).
-- Editors only: this file is never run. Point LuaLS at this folder:
--   .luarc.json: { "workspace.library": ["<graft checkout>/scripts/types"] }
-- tests/python/test_lua_api_docs.py checks that every function, method and field the C++
-- bindings register is declared here, and that nothing else is.

-- {====================================================================================
-- Values

---@alias graft.OpKind "placeholder"|"get_attr"|"call_function"|"call_method"|"call_module"|"output"

--- What a graph argument can be in Lua. Plain sequences are written as lists, plain tables with
--- string keys as dicts (keys sorted); nil stands for None where a value can be nil.
---@alias graft.Value nil|boolean|integer|number|string|graft.Node|graft.NoneType|graft.EllipsisType|graft.List|graft.Tuple|graft.Dict|graft.Slice|graft.DType|graft.Device|graft.Layout|graft.MemoryFormat|graft.Value[]|table<string, graft.Value>

--- A metadata value: what JSON can hold (no nodes, dtypes or slices).
---@alias graft.Json nil|boolean|integer|number|string|graft.NoneType|graft.List|graft.Tuple|graft.Dict|graft.Json[]|table<string, graft.Json>

--- Python's None: one value per sandbox. Truthy in Lua: test with `v == graft.None`.
---@class graft.NoneType

--- Python's `...` (`x[..., 0]` indexes with `(graft.Ellipsis, 0)`): one value per sandbox.
---@class graft.EllipsisType

--- A Python list (getmetatable(v) == "graft.List"). 1-based.
---@class graft.List: { [integer]: graft.Value }

--- A Python tuple (getmetatable(v) == "graft.Tuple"). Node args are read as one. 1-based.
---@class graft.Tuple: { [integer]: graft.Value }

--- An ordered dict (getmetatable(v) == "graft.Dict"): pairs() walks insertion order, # counts entries.
---@class graft.Dict: { [any]: graft.Value }

--- A Python slice (getmetatable(v) == "graft.Slice"); missing parts are graft.None.
---@class graft.Slice
---@field start graft.Value
---@field stop graft.Value
---@field step graft.Value

--- torch.dtype (getmetatable(v) == "graft.DType"); == compares names.
---@class graft.DType
---@field name string e.g. "float32" (no "torch." prefix)

--- torch.device (getmetatable(v) == "graft.Device").
---@class graft.Device
---@field name string e.g. "cpu", "cuda:0"

--- torch.layout (getmetatable(v) == "graft.Layout").
---@class graft.Layout
---@field name string e.g. "strided"

--- torch.memory_format (getmetatable(v) == "graft.MemoryFormat").
---@class graft.MemoryFormat
---@field name string e.g. "contiguous_format"

--- A node's tensor_meta for one tensor (read as a graft.Dict in this key order).
---@class graft.TensorMeta
---@field shape (integer|string)[] sizes; a string is a symbolic size ("s0")
---@field dtype string e.g. "float32"
---@field stride? (integer|string)[]
---@field device? string default "cpu"

---@class graft.NodeFilterTable
---@field op? graft.OpKind
---@field target? string|string[] exact target strings

---@alias graft.NodeFilter graft.OpKind|graft.NodeFilterTable

-- }====================================================================================

-- {====================================================================================
-- Schemas, modules

---@class graft.SchemaArgument
---@field name string "" for an unnamed return
---@field type string as written: "Tensor", "Scalar", "int[1]?", "Tensor(a!)"
---@field kwarg_only boolean after the `*` marker
---@field default? string the default as written ("1", "None", "False"); absent if none
---@field is_tensor boolean exactly one Tensor (with or without alias annotation)
---@field is_mutable boolean the operator writes through it (`!`)

---@class graft.Schema
---@field name string "aten::add"
---@field overload string "Tensor"; "" for the default overload
---@field target string "torch.ops.aten.add.Tensor"
---@field text string the schema as torch prints it
---@field arguments graft.SchemaArgument[]
---@field returns graft.SchemaArgument[]

---@class graft.TensorSpec
---@field name string
---@field shape (integer|string)[]
---@field dtype string

---@class graft.ModuleInfo
---@field path string dotted path ("" for the root module)
---@field class string the module's class name
---@field parameters graft.TensorSpec[]
---@field buffers graft.TensorSpec[]
---@field has_graph boolean
---@field settings? table the module's settings (`num_heads`, `approximate`, `eps`), when the file has them
---@field origin? string in an extracted hierarchy: the model's module this one is a call of
---@field opaque? string in an extracted hierarchy: why the module has no graph (the trace's error)

-- }====================================================================================

-- {====================================================================================
-- graft.Node

--- A handle to one node, valid during the pass (or check, or transformer) that produced it.
---@class graft.Node
---@field name string unique in its graph; settable (refused if taken or empty)
---@field op graft.OpKind read-only
---@field target string settable (a non-empty string)
---@field args graft.Tuple a copy; settable with a sequence
---@field kwargs graft.Dict a copy; settable with a table of string keys or a graft.Dict
---@field meta graft.Dict a copy; change it with n:set_meta
---@field users graft.Node[] distinct users, in the order they started using this node
---@field inputs graft.Node[] distinct nodes referenced by args then kwargs
---@field all_input_nodes graft.Node[] same as inputs (FX's name)
---@field next graft.Node? the next node in graph order
---@field prev graft.Node? the previous node in graph order
---@field graph graft.Graph the graph (a new handle each time: do not compare with ==)
---@field schema graft.Schema? the operator schema of a call_function's target, or nil
---@field module_class string? a call_module's class from the module table, or nil
---@field module graft.ModuleInfo? a call_module's module (class, tensors, settings), or nil
---@field alive boolean false once erased (the only field an erased node still answers)
local Node = {}

--- Makes every user of this node (that `filter` accepts) use `replacement` instead; never
--- rewrites `replacement` itself. Returns the users that changed.
---@param replacement graft.Node
---@param filter? fun(user: graft.Node): boolean
---@return graft.Node[]
function Node:replace_all_uses_with(replacement, filter) end

--- Replaces every reference to `old` in this node's args and kwargs by `new`.
---@param old graft.Node
---@param new graft.Node
function Node:replace_input_with(old, new) end

--- Erases the node; raises while it still has users.
function Node:erase() end

--- The i-th positional argument (1-based), or nil past the end.
---@param i integer
---@return graft.Value
function Node:arg(i) end

--- Sets the i-th positional argument (1-based); i = #args + 1 appends. nil stores None.
---@param i integer
---@param value graft.Value
function Node:set_arg(i, value) end

--- The keyword argument `key`, or nil if absent.
---@param key string
---@return graft.Value
function Node:kwarg(key) end

--- Sets keyword `key` (appended if new); nil removes it, graft.None sets None.
---@param key string
---@param value graft.Value
function Node:set_kwarg(key, value) end

--- Moves `other` to just before this node (FX's prepend).
---@param other graft.Node
function Node:prepend(other) end

--- Moves `other` to just after this node (FX's append).
---@param other graft.Node
function Node:append(other) end

--- Sets metadata `key` (JSON-able value; "tensor_meta" takes a graft.TensorMeta or a list of
--- them); nil removes the key.
---@param key string
---@param value graft.Json|graft.TensorMeta|graft.TensorMeta[]
function Node:set_meta(key, value) end

-- }====================================================================================

-- {====================================================================================
-- graft.Graph

--- A handle to the graph a pass, check or transformer handler is given. `#g` is the node count.
---@class graft.Graph
---@operator len: integer
local Graph = {}

--- Iterates the nodes in graph order as they were when the loop started (erased ones are
--- skipped, new ones are not visited).
---@param filter? graft.NodeFilter
---@return fun(): graft.Node?
function Graph:nodes(filter) end

--- The same nodes as g:nodes(filter), in a table.
---@param filter? graft.NodeFilter
---@return graft.Node[]
function Graph:node_list(filter) end

--- The node called `name`, or nil.
---@param name string
---@return graft.Node?
function Graph:find(name) end

--- The output node, or nil; with a value, creates the output node returning it.
---@param value? graft.Value
---@return graft.Node?
function Graph:output(value) end

--- Creates a node at the insertion point. `name` is a hint made unique by FX's rules.
---@param op graft.OpKind
---@param target string
---@param args? graft.Value[]
---@param kwargs? table<string, graft.Value>|graft.Dict
---@param name? string
---@return graft.Node
function Graph:create_node(op, target, args, kwargs, name) end

--- Creates a call_function node (name derived from the target unless given).
---@param target string e.g. "torch.ops.aten.relu.default"
---@param args? graft.Value[]
---@param kwargs? table<string, graft.Value>|graft.Dict
---@param name? string
---@return graft.Node
function Graph:call_function(target, args, kwargs, name) end

--- Creates a call_method node.
---@param method string e.g. "view"
---@param args? graft.Value[]
---@param kwargs? table<string, graft.Value>|graft.Dict
---@param name? string
---@return graft.Node
function Graph:call_method(method, args, kwargs, name) end

--- Creates a call_module node.
---@param path string dotted module path
---@param args? graft.Value[]
---@param kwargs? table<string, graft.Value>|graft.Dict
---@param name? string
---@return graft.Node
function Graph:call_module(path, args, kwargs, name) end

--- Creates a get_attr node.
---@param path string dotted attribute path
---@param name? string
---@return graft.Node
function Graph:get_attr(path, name) end

--- Creates a placeholder; `name` is also its target.
---@param name string
---@return graft.Node
function Graph:placeholder(name) end

--- New nodes go before `node` while the returned scope is open (`local _ <close> = ...`),
--- or while `fn` runs (its results are returned).
---@param node graft.Node
---@return any scope a to-be-closed value
---@overload fun(self: graft.Graph, node: graft.Node, fn: fun(): ...): ...
function Graph:inserting_before(node) end

--- New nodes go after `node`, in creation order, while the scope is open or `fn` runs.
---@param node graft.Node
---@return any scope a to-be-closed value
---@overload fun(self: graft.Graph, node: graft.Node, fn: fun(): ...): ...
function Graph:inserting_after(node) end

--- Same as node:erase().
---@param node graft.Node
function Graph:erase_node(node) end

--- Removes nodes without users (except placeholders, output and side-effecting calls).
---@return integer removed
function Graph:eliminate_dead_code() end

--- Reorders into a topological order that keeps the current order where it is valid.
function Graph:stable_topological_sort() end

---@class graft.CopyBack
---@field input string? the written graph input's name
---@field attribute string? the written module tensor's path
---@field output integer its place in the new output tuple (1-based)

---@class graft.FunctionalizeReport
---@field writes integer calls that wrote, replaced by functional ones
---@field scatters integer scatter (or inverse view) calls made to write views back
---@field views_replayed integer views made again for reads after a write
---@field copy_backs graft.CopyBack[] written inputs, returned first for copy-back

--- Replaces every write (in-place, out=, into views) by functional calls; raises, graph unchanged, if it cannot.
---@return graft.FunctionalizeReport
function Graph:functionalize() end

---@class graft.ReinplaceDecision
---@field node graft.Node
---@field inplace string the in-place target ("torch.ops.aten.relu_.default")
---@field done boolean
---@field reason string? why not, when not done

---@class graft.ReinplaceReport
---@field done integer calls made in-place
---@field decisions graft.ReinplaceDecision[] every call with an in-place form, in graph order

--- Makes functional calls whose first input dies there write into it (torch.fx's reinplace rules).
---@return graft.ReinplaceReport
function Graph:reinplace() end

---@class graft.MetaMismatch
---@field node string
---@field recorded table|nil
---@field computed table|nil

---@class graft.MetaReport
---@field computed integer nodes whose meta a function computed
---@field kept integer nodes that kept their recorded meta
---@field unknown integer nodes left without meta
---@field missing table<string, integer> targets no function covers, with their node counts
---@field mismatches graft.MetaMismatch[]|nil with check = true

--- Computes every node's tensor_meta with Lua meta functions (scripts/meta: require("meta.functions")).
---@param functions table<string, function> keyed by schema name ("aten::add"), target or module class
---@param options? {only_missing?: boolean, check?: boolean, strict?: boolean}
---@return graft.MetaReport
function Graph:propagate_meta(functions, options) end

---@class graft.MemoryOptions
---@field planner ("size"|"breadth"|"lifetime"|"refine"|"exact"|"best")? default "best"
---@field alignment integer? bytes every offset is a multiple of (a power of two; default 64)
---@field exact_max integer? best also runs the exact search up to this many tensors (default 32)
---@field exact_steps integer? search nodes the exact search may visit (default 100000; deterministic)
---@field time_limit_ms number? a safety cap on the exact search's milliseconds (default 2000, at most 60000)
---@field plan_inputs boolean? place the graph's inputs in the arena (default false)
---@field plan_parameters boolean? place get_attr values (default false)
---@field plan_outputs boolean? place the returned tensors (default true)
---@field symbols table<string, integer>? values of symbolic sizes ({s0 = 32})

---@class graft.PlannedTensor
---@field node graft.Node the node whose value allocates it
---@field element integer which tensor of that value (1 for a plain tensor)
---@field bytes integer
---@field first integer the step (1-based position in graph order) that creates it
---@field last integer the last step that reads it or a value sharing its storage
---@field kind "intermediate"|"input"|"parameter"|"output"
---@field offset integer? its place in the arena; nil when not planned

---@class graft.PlannerRun
---@field planner string
---@field arena integer
---@field milliseconds number
---@field proved_optimal boolean the exact search finished

---@class graft.MemoryPlan
---@field arena integer bytes
---@field lower_bound integer the largest total size live at one step
---@field gap_percent number
---@field fragmentation integer arena - lower_bound
---@field alignment integer
---@field planner string the planner whose plan this is
---@field optimal boolean
---@field peak_step integer
---@field peak_node graft.Node
---@field runs graft.PlannerRun[]
---@field tensors graft.PlannedTensor[]
---@field live_at_peak integer[] indices into tensors, largest first

--- Plans the graph's tensors into one arena (docs/reference/lua.md, Memory planning).
---@param options graft.MemoryOptions?
---@return graft.MemoryPlan
function Graph:plan_memory(options) end

--- The lower bound of the current order: bytes live at the busiest step, and its node.
---@param options graft.MemoryOptions?
---@return integer bytes
---@return graft.Node? node
function Graph:memory_peak(options) end

---@class graft.ScheduleReport
---@field peak_before integer
---@field peak_after integer never above peak_before
---@field moved integer nodes whose position changed
---@field skipped string? why the order was left as it is without trying (too many buffers reached through calls of unknown aliasing)

--- Reorders nodes to lower the memory peak, keeping dependencies, writes and effects in order.
---@param options graft.MemoryOptions?
---@return graft.ScheduleReport
function Graph:schedule_for_memory(options) end

--- Answers x.dtype, x.size(), x.dim(), x.shape[i] from tensor meta and folds them to constants.
---@return integer folded
function Graph:specialize() end

--- Replaces calls that repeat an earlier one (same target and arguments) by it; never merges impure calls.
---@return integer removed
function Graph:eliminate_common_subexpressions() end

---@class graft.NormalizeOptions
---@field defaults "explicit"|"drop"|"keep"? what to do with arguments at their default (default "explicit")
---@field methods boolean? also call_method nodes (default true)
---@field keywords boolean? every argument as a keyword, as torch.fx's normalize_to_only_use_kwargs (default false)

---@class graft.NormalizeSkip
---@field node graft.Node
---@field reason string

---@class graft.NormalizeReport
---@field changed integer calls rewritten
---@field unchanged integer calls already in the canonical form
---@field no_schema integer calls no schema describes
---@field skipped graft.NormalizeSkip[] calls left alone, with the reason

--- Rewrites every call with a known schema into one spelling (positional up to the schema's `*`).
--- A traced pattern has the same method (pattern:normalize_args), reporting skipped nodes by name.
---@param options graft.NormalizeOptions?
---@return graft.NormalizeReport
function Graph:normalize_args(options) end

--- Checks every invariant: true, or false and the message.
---@return boolean ok
---@return string? message
function Graph:lint() end

--- A submodule by dotted path, or nil.
---@param path string
---@return graft.ModuleInfo?
function Graph:module(path) end

--- Every module path, in file order ("" is the root).
---@return string[]
function Graph:modules() end

--- A parameter or buffer by dotted path ("layer1.0.conv1.weight"), or nil.
---@param path string
---@return graft.TensorSpec?
function Graph:attribute(path) end

--- True if `path` names a parameter or buffer.
---@param path string
---@return boolean
function Graph:has_attribute(path) end

---@class graft.MatchOptions
---@field match_output? boolean the pattern's output must be the graph's output
---@field match_placeholder? boolean pattern inputs match only graph inputs
---@field remove_overlapping_matches? boolean default true: the earliest anchor wins
---@field ignore_literals? boolean literals in the pattern match anything
---@field meta? graft.MetaPolicy replace_pattern only: what new nodes inherit (default "drop", as FX)
---@field keep_meta? boolean replace_pattern only: true is meta = "outputs" (meta wins if both are given)
---@field keep_names? boolean replace_pattern only: a new node in a replaced node's place takes its name

--- What a rewrite's new nodes inherit from the nodes they replace: "drop" (FX: nothing),
--- "outputs" (each replacement output takes the replaced node's metadata), "all" (as
--- "outputs", and other new nodes take the free-form keys of the first replaced output).
---@alias graft.MetaPolicy "drop"|"outputs"|"all"

---@class graft.Match
---@field returning graft.Node[] graph nodes bound to the pattern's outputs
---@field inputs graft.Value[] what each pattern input bound (graft.None when unused); wildcards are not inputs
---@field nodes graft.Dict pattern node name -> graph node

--- One candidate of g:explain.
---@class graft.Explanation
---@field candidate graft.Node the graph node tried for the pattern's first output
---@field matches boolean
---@field reason? string why not (the first failure), absent when it matches
---@field matched? integer how far it got: pattern nodes bound when it failed
---@field pattern_nodes? integer the pattern's nodes other than its inputs

--- Every match of `pattern` (torch.fx SubgraphMatcher semantics).
---@param pattern graft.Pattern
---@param options? graft.MatchOptions
---@return graft.Match[]
function Graph:match(pattern, options) end

--- For each candidate of the pattern's first output (or only `node`): whether the pattern
--- matches there, or the first reason it does not.
---@param pattern graft.Pattern
---@param node? graft.Node
---@param options? graft.MatchOptions
---@return graft.Explanation[]
function Graph:explain(pattern, node, options) end

---@class graft.Replaced
---@field anchor string name of the graph node the match was found at (now erased)
---@field nodes graft.Dict pattern node name -> matched graph node name
---@field replacements graft.Node[] the new nodes, in replacement order

--- Replaces every match of `pattern` by `replacement` (torch.fx replace_pattern); returns how
--- many, and what each replacement matched and created.
---@param pattern graft.Pattern
---@param replacement graft.Pattern
---@param options? graft.MatchOptions
---@return integer
---@return graft.Replaced[]
function Graph:replace_pattern(pattern, replacement, options) end

--- Applies the enabled rules (a rule set or one rule) once (FX) or to a fixed point; one
--- transaction with the pass. Limits and cycles are not errors: look at report.stop.
---@param rules graft.RuleSet|graft.Rule
---@param options? graft.ApplyOptions
---@return graft.ApplyReport
function Graph:apply(rules, options) end

--- The graph as FX's print_tabular prints it.
---@return string
function Graph:tabular() end

---@class graft.PartitionOptions
---@field support graft.Support the rule saying which calls the backend takes
---@field allows_single_node_partition? boolean keep partitions with one compute node (false)
---@field non_compute_ops? string[] targets that are not compute, besides view and getitem
---@field allowed_single_node_partition_ops? string[] targets that count twice
---@field skip_horizontal_fusion? boolean merge only along data edges (false)
---@field remove_bookend_non_compute_ops? boolean drop non_compute_ops at partition boundaries (false)
---@field min_partition_size? integer fewer compute nodes fall back (0: off)
---@field max_partition_size? integer cut bigger partitions into pieces this big (0: off)
---@field exclude_nodes? string[] never partitioned
---@field fuse? boolean also fuse the partitions (false)
---@field prefix? string submodule names when fusing ("fused_")

---@class graft.LeftOut
---@field node graft.Node
---@field reason "unsupported"|"excluded"|"single_node"|"non_compute_only"|"below_minimum"|"bookend"|"getitem_of_outside"
---@field rule string? the declining support rule
---@field blocked_by graft.Node? the unsupported node through which joining the next partition would make a cycle

---@class graft.Partitioning
---@field partitions graft.Node[][] nearest the graph's end first, each in graph order
---@field left_out graft.LeftOut[] every call in no partition, in graph order
---@field calls graft.Node[]? the call_module nodes, with fuse = true

--- torch.fx's capability partitioner.
---@param options graft.PartitionOptions
---@return graft.Partitioning
function Graph:partition(options) end

--- torch.fx's fuse_by_partitions: each node list becomes the submodule `<prefix>i`.
---@param partitions graft.Node[][]
---@param prefix? string
---@return graft.Node[] calls
function Graph:fuse_partitions(partitions, prefix) end

--- torch.fx's topo_sort of a node list: dependencies first, the given order kept where free.
---@param nodes graft.Node[]
---@return graft.Node[]
function Graph:topo_sort(nodes) end

--- A new submodule whose graph `build(sub)` makes; call it with g:call_module(path, args).
---@param path string
---@param build fun(sub: graft.Graph)
---@param class? string default torch.fx.graph_module.GraphModule
function Graph:add_submodule(path, build, class) end

--- The module at `path` gets the graph `build(sub)` makes (a custom extraction); its class,
--- tensors and settings stay and it is no longer opaque. Only in a pipeline pass.
---@param path string
---@param build fun(sub: graft.Graph)
function Graph:set_submodule_graph(path, build) end

--- Where a node path leads: the module whose graph holds the node ("" for this graph) and the
--- node's name; nil and the reason when it leads nowhere.
---@param path string
---@return string? module
---@return string name_or_reason
function Graph:locate(path) end

--- fn(g), then the graph and its module table exactly as before.
---@generic T
---@param fn fun(g: graft.Graph): T
---@return T
function Graph:scope(fn) end

--- The call_module `node` replaced by its module's graph; the nodes made.
---@param node graft.Node
---@return graft.Node[]
function Graph:inline(node) end

--- Every call of a module with a graph inlined, recursively, until only opaque modules are called.
---@return integer inlined
function Graph:inline_all() end

--- `nodes` become the submodule `name`, called once where they were; the call_module node.
---@param nodes graft.Node[]
---@param name string
---@param class? string default torch.fx.graph_module.GraphModule
---@return graft.Node
function Graph:outline(nodes, name, class) end

--- fn(sub) on the module's own graph, and fn's result: editable in a pipeline pass (linted
--- afterwards), read-only elsewhere.
---@generic T
---@param path string
---@param fn fun(sub: graft.Graph): T
---@return T
function Graph:submodule(path, fn) end

-- }====================================================================================

-- {====================================================================================
-- Declarations

---@class graft.PassSpec
---@field name? string shown in reports (default: "file:line" of run)
---@field run fun(g: graft.Graph)

---@class graft.Pass
---@field kind "pass"
---@field name string?
---@field run fun(g: graft.Graph)

--- A handler: g is the NEW graph (args already refer to it), node the original (read-only).
--- Return the value that stands for the original node: a node, one of the inputs, or a constant.
---@alias graft.Handler fun(g: graft.Graph, target: string, args: graft.Tuple, kwargs: graft.Dict, node: graft.Node): graft.Value

---@class graft.TransformerSpec
---@field name? string
---@field call_function? graft.Handler
---@field call_method? graft.Handler
---@field call_module? graft.Handler
---@field get_attr? graft.Handler

---@class graft.Transformer: graft.TransformerSpec
---@field kind "transformer"

---A pass of the engine's registry: docs/reference/passes.md, or `graft pass --list`.
---@alias graft.BuiltinName string

---@class graft.Builtin
---@field kind "builtin"
---@field name graft.BuiltinName

---@alias graft.Step fun(g: graft.Graph)|graft.Pass|graft.Transformer|graft.Builtin|graft.Fixpoint|graft.BuiltinName

---@class graft.FixpointSpec
---@field name? string default "fixpoint"
---@field passes graft.Step[]
---@field max_iterations? integer default 10

---@class graft.Fixpoint: graft.FixpointSpec
---@field kind "fixpoint"

--- A check: raise, or return false (and a message), to fail. Runs on a read-only graph.
---@alias graft.Check fun(g: graft.Graph): (boolean?, string?)|"lint"

---@class graft.PipelineSpec
---@field name? string default: the script's file name
---@field passes graft.Step[]
---@field checks? graft.Check[]|graft.Check run before the first pass (and after each, if asked)
---@field constraints? graft.Constraint[] pass-ordering constraints, checked when the pipeline is declared
---@field run_checks_after_each_pass? boolean default false
---@field suppress_check_failures? boolean default false: a failing check stops the pipeline
---@field steps? integer sweeps over `passes` until one changes nothing (default 1)

---@class graft.Pipeline
---@field kind "pipeline"
---@field name string?
---@field passes graft.Step[]
---@field checks graft.Check[]
---@field run_checks_after_each_pass boolean
---@field suppress_check_failures boolean
---@field steps integer

-- }====================================================================================

-- {====================================================================================
-- Rules

---@class graft.RuleSpec
---@field name string non-empty, unique in a set
---@field pattern graft.Pattern
---@field replacement graft.Pattern|fun(match: graft.Match): graft.Pattern by position of the pattern's inputs; a function builds one per match
---@field priority? integer default 0; higher first
---@field filter? fun(match: graft.Match): boolean false or nil leaves the match alone
---@field keep? fun(change: {peak_before: integer, peak_after: integer}): boolean after each rewrite: false undoes it
---@field meta_functions? table with keep: meta functions that size the replacement's inner nodes
---@field meta? graft.MetaPolicy default "outputs"
---@field keep_meta? boolean true is meta = "outputs" (as in g:replace_pattern); meta wins
---@field keep_names? boolean a new node in a replaced node's place takes its name (torch.fx: a fresh name)
---@field enabled? boolean default true: whether sets made from it start with it enabled
---@field examples? string[] graph files (relative to the script) graft verify checks the rule on
---@field exact? boolean default true; false: the rule changes what the graph computes on purpose (graft verify skips it)

--- A rule (getmetatable(r) == "graft.Rule"); its fields are read-only.
---@class graft.Rule
---@field name string
---@field priority integer
---@field enabled boolean as declared (a set's rs:enable / rs:disable do not change it)
---@field pattern graft.Pattern
---@field replacement graft.Pattern|fun(match: graft.Match): graft.Pattern
---@field examples string[] as declared
---@field exact boolean as declared

---@alias graft.ApplyMode "once"|"fixpoint"

---@class graft.ApplyOptions
---@field mode? graft.ApplyMode default "fixpoint"
---@field max_sweeps? integer fixpoint sweeps at most (default 10)
---@field max_iterations? integer the older name of max_sweeps
---@field max_rewrites? integer rewrites at most (default 10 per node of the graph, at least 1000000)
---@field partial? boolean keep what a run cut short by a limit did (default false: the pass fails)
---@field enable? string[] rule names enabled for this call
---@field disable? string[] rule names disabled for this call (wins over enable)
---@field log? fun(line: string) each decision of the driver

---@class graft.RulesPassSpec: graft.ApplyOptions
---@field name? string the pass's name (default "rules")

---@alias graft.StopKind "converged"|"completed"|"sweep_limit"|"rewrite_limit"|"cycle"

---@class graft.RuleStats
---@field name string
---@field matches integer matches found (refused ones included)
---@field filtered integer matches the filter refused
---@field undone integer rewrites made, then undone because keep returned false
---@field rewrites integer

---@class graft.ApplyReport
---@field rewrites integer
---@field sweeps integer sweeps run (once: 1)
---@field iterations integer the older name of sweeps
---@field stop graft.StopKind
---@field reason string "converged", "completed", "sweep limit (10)", "rewrite limit (1000)", "cycle: a -> b -> a (the rules undo each other) at add"
---@field cycle string[] stop == "cycle": the rules fired since the graph was last in this state, each once
---@field rules graft.RuleStats[] one per rule of the set, in its order

--- A rule set (getmetatable(rs) == "graft.RuleSet"). `#rs` is the number of rules.
---@class graft.RuleSet
---@operator len: integer
local RuleSet = {}

--- The rule names, in order.
---@return string[]
function RuleSet:names() end

--- Enables rule `name` in this set; returns the set.
---@param name string
---@return graft.RuleSet
function RuleSet:enable(name) end

--- Disables rule `name` in this set; returns the set.
---@param name string
---@return graft.RuleSet
function RuleSet:disable(name) end

--- The rule called `name` (raises if the set has none).
---@param name string
---@return graft.Rule
function RuleSet:rule(name) end

--- A pass that runs g:apply(self, spec); spec is read when the pass runs.
---@param spec? graft.RulesPassSpec
---@return graft.Pass
function RuleSet:pass(spec) end

-- }====================================================================================

-- {====================================================================================
-- The graft table (read-only)

---@class graftlib
---@field None graft.NoneType Python's None
---@field Ellipsis graft.EllipsisType Python's `...`
---@field version string the API version, "0.1.0"
---@field ops graft.Namespace torch.ops, for tracing: graft.ops.aten.add.Tensor(x, y)
---@field any graft.Any in a traced call: any one argument (node or literal), bound to nothing
graft = {}

---@class graft.Pattern a traced pattern graph (tostring prints its table)
local Pattern = {}

--- Rewrites the pattern's calls into the spelling g:normalize_args gives a graph (before a rule uses it).
---@param options graft.NormalizeOptions?
---@return graft.NormalizeReport report (skipped[i].node is the pattern node's name)
function Pattern:normalize_args(options) end

---@class graft.Namespace a dotted name: index it to extend, call it to record a call_function
---@field [string] graft.Namespace

--- Traces `fn`, called with one symbolic input per parameter, into a pattern graph.
---@param fn function
---@return graft.Pattern
function graft.trace(fn) end

--- A namespace for recording calls while tracing: graft.ns("torch.nn.functional").relu(x).
---@param prefix string
---@return graft.Namespace
function graft.ns(prefix) end

--- A pattern from a graph file graft_fx exported (a Python pattern function or module):
--- "patterns.attention" is patterns/attention.json under the script roots (watched for reload).
--- Its module calls match modules of the same class unless modules_by_class is false.
---@param name string dotted, as for require
---@param options? {modules_by_class?: boolean}
---@return graft.Pattern
function graft.pattern_file(name, options) end

--- graft.any (getmetatable(v) == "graft.Any"): a wildcard argument, only inside graft.trace.
---@class graft.Any

--- Keyword arguments for a traced call (getmetatable(v) == "graft.Kwargs"); its last argument.
---@class graft.Kwargs: { [string]: graft.Value|graft.Optional }

--- A keyword value the graph may leave out (getmetatable(v) == "graft.Optional").
---@class graft.Optional
---@field value graft.Value

--- graft.one_of / graft.module results (getmetatable(v) == "graft.Callable"): call them while
--- tracing to record a call_function with alternative targets, or a call_module by class.
---@class graft.Callable
---@operator call: graft.Node

--- Constraints on a traced node (graft.constrain).
---@class graft.Constraints
---@field users? integer the graph node has exactly this many users
---@field commutative? boolean the first two positional arguments may come in either order
---@field where? fun(node: graft.Node): boolean a predicate on the graph node (read-only)
---@field name? string how explanations name the predicate (default "where")

--- Keyword arguments for the traced call it is the last argument of: f(x, graft.kw{dim = 1}).
---@param kwargs table<string, graft.Value|graft.Optional>
---@return graft.Kwargs
function graft.kw(kwargs) end

--- Inside graft.kw: the graph may leave this keyword out; if it gives it, it must match `value`.
--- A pattern input used only here binds graft.None when the keyword is left out.
---@param value graft.Value
---@return graft.Optional
function graft.optional(value) end

--- A callable that records a call_function matching any of the targets (the first one is its
--- target): graft.one_of(F.relu, F.gelu, "torch.relu")(x).
---@param ... string|graft.Namespace
---@return graft.Callable
function graft.one_of(...) end

--- A callable that records a call_module matching any module of `class` ("torch.nn.Linear",
--- "torch.nn.modules.linear.Linear" or "Linear"), wherever it sits. `name` (a plain name;
--- default: the class's last part, lower case) is the pattern's name for it: a replacement
--- reaches the matched module as `name` and its parameters as `name.weight`.
---@param class string|string[] one class, or a list: any of them matches
---@param name? string
---@return graft.Callable
function graft.module(class, name) end

--- Constrains the traced node `value` (users, commutative, where, name); returns `value`.
---@param value graft.Node
---@param constraints graft.Constraints
---@return graft.Node
function graft.constrain(value, constraints) end

--- Records a get_attr node: in a pattern it matches any get_attr; in a replacement it is the
--- attribute at `path` ("lin.weight" moves onto the module a graft.module named "lin" matched).
---@param path string
---@return graft.Node
function graft.get_attr(path) end

---@class graft.Support

--- Support rules (torch.fx's operator support), for g:partition and `graft partition`.
graft.support = {}

--- Accepts calls whose target (call_function), method name (call_method) or class (call_module) is listed.
---@param targets string[]|{name: string?}
---@return graft.Support
function graft.support.targets(targets) end

--- Accepts every call except the named nodes.
---@param names string[]|{name: string?}
---@return graft.Support
function graft.support.decline_names(names) end

--- Accepts calls the function returns true for.
---@param fn fun(node: graft.Node): boolean
---@param name? string
---@return graft.Support
function graft.support.predicate(fn, name) end
graft.support.create_op_support = graft.support.predicate

--- Accepts what every rule accepts.
---@param ... graft.Support
---@return graft.Support
function graft.support.chain(...) end

--- Accepts what one rule accepts.
---@param ... graft.Support
---@return graft.Support
function graft.support.any_chain(...) end

--- Accepts what the rule declines.
---@param rule graft.Support
---@param name? string
---@return graft.Support
function graft.support.negate(rule, name) end

---@class graft.Limits
---@field instructions integer Lua instructions per call (top level, pass, check)
---@field memory_mb integer memory budget of the script's state, in MiB
---@field call_time_ms integer wall time per call after loading (0: none)

--- Lowers this script's budgets (never above the host's); returns the limits in force.
--- Keys: instructions, memory_mb, call_time_ms (positive integers). No argument: just read.
---@param wanted? {instructions?: integer, memory_mb?: integer, call_time_ms?: integer}
---@return graft.Limits
function graft.limits(wanted) end

--- A Python list from a sequence (copied).
---@param items? graft.Value[]
---@return graft.List
function graft.list(items) end

--- A Python tuple from a sequence (copied).
---@param items? graft.Value[]
---@return graft.Tuple
function graft.tuple(items) end

--- An ordered dict from {key, value} pairs: graft.dict{{"b", 1}, {"a", 2}}; empty without argument.
---@param pairs? {[1]: any, [2]: graft.Value}[]
---@return graft.Dict
function graft.dict(pairs) end

--- slice(start, stop, step); nil parts are None.
---@param start? graft.Value
---@param stop? graft.Value
---@param step? graft.Value
---@return graft.Slice
function graft.slice(start, stop, step) end

--- torch.dtype by name ("float32" or "torch.float32").
---@param name string
---@return graft.DType
function graft.dtype(name) end

--- torch.device by name ("cpu", "cuda:0").
---@param name string
---@return graft.Device
function graft.device(name) end

--- torch.layout by name ("strided").
---@param name string
---@return graft.Layout
function graft.layout(name) end

--- torch.memory_format by name ("channels_last").
---@param name string
---@return graft.MemoryFormat
function graft.memory_format(name) end

--- The operator schema of an ATen/prims target ("torch.ops.aten.add.Tensor", "aten::add.Tensor"), or of one
--- graft.register_schema added, or nil.
---@param target string
---@return graft.Schema?
function graft.schema(target) end

---@class graft.RegisterSchemaOptions
---@field side_effects boolean? calls are kept by dead-code elimination even when unused
---@field random boolean? a random operator: never merged by common-subexpression elimination, never removed

--- Adds operator schemas in TorchScript syntax, one per line, all or none; returns their targets
--- ("torch.ops.npu.npu_quant_matmul.default"). A line that does not parse raises an error with a caret.
---@param text string
---@param options graft.RegisterSchemaOptions?
---@return string[]
function graft.register_schema(text, options) end

--- Declares a pass: graft.pass{name = ..., run = function(g) ... end} (or a bare function).
---@param spec graft.PassSpec|fun(g: graft.Graph)
---@return graft.Pass
function graft.pass(spec) end

--- Declares a Transformer: a handler per node kind; nodes without one are copied.
---@param spec graft.TransformerSpec
---@return graft.Transformer
function graft.transformer(spec) end

--- One of the built-in passes.
---@param name graft.BuiltinName
---@return graft.Builtin
function graft.builtin(name) end

--- A group of passes repeated until an iteration changes nothing (or max_iterations).
---@param spec graft.FixpointSpec
---@return graft.Fixpoint
function graft.fixpoint(spec) end

---@class graft.Constraint

--- torch's this_before_that_pass_constraint: in a pipeline holding both, `this` runs first.
---@param this graft.Step
---@param that graft.Step
---@return graft.Constraint
function graft.this_before_that(this, that) end

--- A pipeline (FX's PassManager): passes, checks, sweeps.
---@param spec graft.PipelineSpec
---@return graft.Pipeline
function graft.pipeline(spec) end

--- A rewrite rule.
---@param spec graft.RuleSpec
---@return graft.Rule
function graft.rule(spec) end

--- A rule set from a list of rules (names unique); each set has its own enable flags.
---@param rules graft.Rule[]
---@return graft.RuleSet
function graft.rules(rules) end

-- }====================================================================================
