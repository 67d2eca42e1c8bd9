// g:propagate_meta(functions [, options]): tensor meta computed node by node by Lua meta
// functions, in graph order, each reading the meta its inputs were given.
#include "meta_propagation.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "graft/ir/graph.hpp"
#include "graft/ir/module_table.hpp"
#include "graft/ir/schema_binding.hpp"
#include "handles.hpp"
#include "lua_json.hpp"
#include "lua_values.hpp"
#include "meta_calls.hpp"
#include "meta_values.hpp"
#include "options.hpp"
#include "sandbox_state.hpp"
#include "trampoline.hpp"

namespace graft::lua::detail {

namespace {

struct PropagateOptions {
  bool only_missing = false;  ///< nodes with recorded meta keep it; only the others are computed
  bool check = false;  ///< compare with the recorded meta; write nothing
  bool strict = false;  ///< a call no function covers is an error
};

PropagateOptions read_options(lua_State* L, int index) {
  PropagateOptions o;
  if (lua_isnoneornil(L, index)) return o;
  luaL_checktype(L, index, LUA_TTABLE);
  check_option_names(L, index, "g:propagate_meta", {"only_missing", "check", "strict"});
  auto flag = [&](const char* name, bool& out) {
    if (lua_getfield(L, index, name) != LUA_TNIL) out = lua_toboolean(L, -1) != 0;
    lua_pop(L, 1);
  };
  flag("only_missing", o.only_missing);
  flag("check", o.check);
  flag("strict", o.strict);
  return o;
}

// {====================================================================================
// The walk

/// Where a node's function comes from: looked up once per target (or schema) and kept in
/// the array at `fns` (0: no function).
class FunctionIndex {
 public:
  FunctionIndex(lua_State* L, int table, int slots) : L_(L), table_(table), slots_(slots) {}

  /// Pushes the function for `key` and returns true, or pushes nothing and returns false.
  bool push(const std::string& key) {
    auto [it, fresh] = slot_of_.try_emplace(key, 0);
    if (fresh) {
      lua_pushlstring(L_, key.data(), key.size());
      const int type = lua_rawget(L_, table_);  // raw: no script code runs while the walk looks up
      if (type == LUA_TFUNCTION) {
        it->second = ++count_;
        lua_rawseti(L_, slots_, it->second);
      } else {
        if (type != LUA_TNIL)
          luaL_error(L_, "g:propagate_meta: functions['%s'] is a %s, expected a function", key.c_str(),
                     luaL_typename(L_, -1));
        lua_pop(L_, 1);
      }
    }
    if (it->second == 0) return false;
    lua_rawgeti(L_, slots_, it->second);
    return true;
  }

 private:
  lua_State* L_;
  int table_;
  int slots_;
  int count_ = 0;
  std::unordered_map<std::string, int> slot_of_;
};

/// The alias set a type writes to: `Tensor(a!)` -> "a"; empty when it writes nothing.
std::string_view written_alias(std::string_view type) {
  const auto open = type.find('(');
  const auto bang = type.find("!)");
  if (open == std::string_view::npos || bang == std::string_view::npos || bang < open) return {};
  return type.substr(open + 1, bang - open - 1);
}

/// For a schema whose every return is an argument it writes (`add_`, `relu_`, `out=`
/// variants): the index of that argument per return. Empty otherwise.
std::vector<std::size_t> written_returns(const OpSchema& s) {
  std::vector<std::size_t> which;
  for (const SchemaArgument& r : s.returns) {
    const std::string_view alias = written_alias(r.type);
    if (alias.empty()) return {};
    std::size_t found = s.arguments.size();
    for (std::size_t i = 0; i < s.arguments.size() && found == s.arguments.size(); ++i)
      if (written_alias(s.arguments[i].type) == alias) found = i;
    if (found == s.arguments.size()) return {};
    which.push_back(found);
  }
  return which;
}

std::string schema_key(const OpSchema& s, bool with_overload) {
  std::string key = s.ns + "::" + s.name;
  if (with_overload && !s.overload.empty()) key += "." + s.overload;
  return key;
}

bool same_meta(const ValueMeta& a, const ValueMeta& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case ValueMeta::Kind::None: return true;
    case ValueMeta::Kind::Tensor:
      return a.tensor.shape == b.tensor.shape && a.tensor.dtype == b.tensor.dtype &&
          a.tensor.device == b.tensor.device &&
          (a.tensor.stride.empty() || b.tensor.stride.empty() || a.tensor.stride == b.tensor.stride);
    case ValueMeta::Kind::Tuple:
      if (a.elements.size() != b.elements.size()) return false;
      for (std::size_t i = 0; i < a.elements.size(); ++i)
        if (!same_meta(a.elements[i], b.elements[i])) return false;
      return true;
  }
  return false;
}

/// The device of the first tensor in `v`, or empty.
std::string first_device(const ValueMeta& v) {
  if (v.kind == ValueMeta::Kind::Tensor) return v.tensor.device.str();
  for (const ValueMeta& e : v.elements)
    if (std::string d = first_device(e); !d.empty()) return d;
  return {};
}

struct Mismatch {
  NodeId node;
  ValueMeta recorded;
  ValueMeta computed;
};

class Propagation {
 public:
  Propagation(lua_State* L, GraphSession& session, const PropagateOptions& options, int functions)
      : L_(L), session_(session), g_(*session.graph), options_(options) {
    lua_createtable(L, static_cast<int>(g_.num_slots()), 0);
    cache_ = lua_gettop(L);
    lua_newtable(L);
    index_.emplace(L, functions, lua_gettop(L));
    computed_.resize(g_.num_slots());
  }

  void run() {
    SandboxState& state = state_of(L_);
    remaining_users_.assign(g_.num_slots(), 0);
    for (NodeId n : g_.nodes()) remaining_users_[n] = static_cast<std::uint32_t>(g_.users(n).size());
    for (NodeId n : g_.nodes()) {
      state.charge_work(L_, 1);
      visit(n);
      release_inputs(n);
    }
  }

  void commit() {
    for (NodeId n = 0; n < computed_.size(); ++n)
      if (computed_[n]) g_.edit_meta(n).tensor_meta = std::move(*computed_[n]);
  }

  void push_report() {
    lua_createtable(L_, 0, 5);
    lua_pushinteger(L_, computed_count_);
    lua_setfield(L_, -2, "computed");
    lua_pushinteger(L_, kept_);
    lua_setfield(L_, -2, "kept");
    lua_pushinteger(L_, unknown_);
    lua_setfield(L_, -2, "unknown");
    push_new_dict(L_);  // sorted by target, so reports compare equal run to run
    const int missing = lua_gettop(L_);
    for (const auto& [target, count] : missing_) {
      lua_pushlstring(L_, target.data(), target.size());
      lua_pushinteger(L_, count);
      dict_set(L_, missing);
    }
    lua_setfield(L_, -2, "missing");
    if (options_.check) {
      lua_createtable(L_, static_cast<int>(mismatches_.size()), 0);
      lua_Integer i = 0;
      for (const Mismatch& m : mismatches_) {
        lua_createtable(L_, 0, 3);
        lua_pushstring(L_, g_.name(m.node).c_str());
        lua_setfield(L_, -2, "node");
        push_plain_meta(L_, m.recorded);
        lua_setfield(L_, -2, "recorded");
        push_plain_meta(L_, m.computed);
        lua_setfield(L_, -2, "computed");
        lua_rawseti(L_, -2, ++i);
      }
      lua_setfield(L_, -2, "mismatches");
    }
  }

 private:
  /// Drops the Lua value of each input `n` was the last reader of: the tables the collector
  /// must walk stay as few as the values still to be read, not one per node.
  void release_inputs(NodeId n) {
    const NodeIdList& inputs = g_.inputs(n);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const NodeId in = inputs[i];
      bool repeat = false;
      for (std::size_t j = 0; j < i && !repeat; ++j) repeat = inputs[j] == in;
      if (repeat || remaining_users_[in] == 0 || --remaining_users_[in] > 0) continue;
      lua_pushnil(L_);
      lua_rawseti(L_, cache_, static_cast<lua_Integer>(in) + 1);
    }
  }

  void set_value(NodeId n, const ValueMeta& v) {
    push_plain_meta(L_, v);
    lua_rawseti(L_, cache_, static_cast<lua_Integer>(n) + 1);
  }

  /// The node keeps (and passes on) what was recorded for it, if anything.
  void keep_recorded(NodeId n) {
    const ValueMeta& recorded = g_.meta(n).tensor_meta;
    if (recorded.kind == ValueMeta::Kind::None) {
      ++unknown_;
      return;
    }
    ++kept_;
    set_value(n, recorded);
  }

  void visit(NodeId n) {
    const NodeMeta& meta = g_.meta(n);
    switch (g_.op(n)) {
      case OpKind::Placeholder: keep_recorded(n); return;
      case OpKind::GetAttr:
        if (meta.tensor_meta.kind == ValueMeta::Kind::None) return attribute(n);
        keep_recorded(n);
        return;
      case OpKind::Output: return output(n);
      default: break;
    }
    if (options_.only_missing && meta.tensor_meta.kind != ValueMeta::Kind::None) return keep_recorded(n);
    call(n);
  }

  /// A parameter or buffer as the module table describes it (row-major on the cpu unless it says).
  static ValueMeta module_tensor_meta(const TensorSpec& spec) {
    ValueMeta v;
    v.kind = ValueMeta::Kind::Tensor;
    v.tensor.shape = spec.shape;
    v.tensor.dtype = spec.dtype;
    v.tensor.device = InternedString(spec.device.empty() ? "cpu" : spec.device);
    if (spec.stride) v.tensor.stride = *spec.stride;
    else if (auto stride = contiguous_strides(spec.shape)) v.tensor.stride = *stride;
    return v;
  }

  /// A get_attr without recorded meta: the parameter or buffer the module table describes.
  void attribute(NodeId n) {
    const TensorSpec* spec = session_.modules ? session_.modules->find_tensor(g_.target(n)) : nullptr;
    if (spec == nullptr) {
      ++unknown_;
      return;
    }
    finish(n, module_tensor_meta(*spec));
  }

  /// The output node describes what it returns, as torch.fx's ShapeProp records it.
  void output(NodeId n) {
    if (options_.only_missing && g_.meta(n).tensor_meta.kind != ValueMeta::Kind::None) return keep_recorded(n);
    if (g_.args(n).size() != 1) return keep_recorded(n);
    bool unknown = false;
    push_meta_argument(L_, g_.args(n)[0], cache_, unknown, false);
    ValueMeta v;
    if (!unknown) convert(n, v);
    lua_pop(L_, 1);
    if (unknown || v.kind == ValueMeta::Kind::None) return keep_recorded(n);
    finish(n, std::move(v));
  }

  /// The binding used first is one that takes every input known to be a tensor (by its recorded
  /// meta or what was computed for it) as a Tensor: the schema reader could only judge by the
  /// recorded meta, and a node with none fits `mul.float(float a, float b)` as well as
  /// `mul.Tensor(Tensor self, Tensor other)`.
  void prefer_tensor_fit(std::vector<BoundCall>& bound) const {
    auto is_tensor = [&](const Argument& v) {
      if (!v.is_node()) return false;
      const ValueMeta& m = computed_[v.node_id()] ? *computed_[v.node_id()] : g_.meta(v.node_id()).tensor_meta;
      return m.kind == ValueMeta::Kind::Tensor;
    };
    auto takes_tensors = [&](const BoundCall& b) {
      for (std::size_t i = 0; i < b.values.size(); ++i) {
        if (!b.values[i] || !is_tensor(*b.values[i])) continue;
        const std::string type = without_alias(b.schema->arguments[i].type);
        if (type != "Tensor" && type != "Tensor?") return false;
      }
      return true;
    };
    auto first = std::find_if(bound.begin(), bound.end(), takes_tensors);
    if (first != bound.end() && first != bound.begin()) std::rotate(bound.begin(), first, first + 1);
  }

  void call(NodeId n) {
    const OpKind op = g_.op(n);
    const std::string& target = g_.target(n);
    std::vector<BoundCall> bound;
    bool found = false;
    const OpSchema* schema = nullptr;
    std::vector<std::size_t> out_arguments;
    if (op == OpKind::CallModule) {
      const ModuleInfo* m = session_.modules ? session_.modules->find(target) : nullptr;
      found = m != nullptr && index_->push(m->class_name);
    } else if ((op == OpKind::CallFunction && index_->push(target)) ||
               (op == OpKind::CallMethod && index_->push("Tensor." + target))) {
      found = true;  // a function keyed by the target (a method's as "Tensor.to"), given arguments by position
    } else {
      bound = bind_call(*state_of(L_).schemas(), g_, n);
      prefer_tensor_fit(bound);
      if (!bound.empty()) {
        schema = bound.front().schema;
        const OpSchema* key = schema;
        const std::vector<std::size_t> written = written_returns(*schema);
        if (!written.empty()) {
          if (schema->arguments[written.front()].kwarg_only) {
            out_arguments = written;  // out=: the functional result, fitted into `out`
          } else if (const OpSchema* view = view_form(*schema)) {
            key = view;  // squeeze_, transpose_, ...: reshape `self` as the view op would
          } else if (!index_->push(schema_key(*schema, true)) && !index_->push(schema_key(*schema, false))) {
            if (!written_result(n, bound.front(), written)) keep_recorded(n);  // add_, relu_: `self`
            return;
          } else {
            lua_pop(L_, 1);  // resize_ and the like have functions of their own
          }
        }
        found = index_->push(schema_key(*key, true)) || index_->push(schema_key(*key, false));
        if (!found && !out_arguments.empty()) {
          if (!written_result(n, bound.front(), out_arguments)) keep_recorded(n);
          return;
        }
      }
    }
    if (!found) {
      const std::string what = op == OpKind::CallModule && session_.modules && session_.modules->find(target)
          ? session_.modules->find(target)->class_name
          : (op == OpKind::CallMethod ? "Tensor." + target : target);
      if (options_.strict)
        luaL_error(L_, "g:propagate_meta: node '%s': no meta function for %s", g_.name(n).c_str(), what.c_str());
      ++missing_[what];
      return keep_recorded(n);
    }
    const int fn = lua_gettop(L_);
    bool unknown = false;
    push_call_arguments(n, schema ? &bound.front() : nullptr, unknown);
    const int nargs = lua_gettop(L_) - fn;
    if (unknown) {
      lua_settop(L_, fn - 1);
      return keep_recorded(n);
    }
    const std::string device = input_device(n);
    const int rc = lua_pcall(L_, nargs, 1, 0);
    if (rc != LUA_OK) {
      if (state_of(L_).budget().exhausted) lua_error(L_);
      const char* msg = lua_tostring(L_, -1);
      luaL_error(L_, "g:propagate_meta: node '%s' (%s): %s", g_.name(n).c_str(),
                 schema ? schema_key(*schema, true).c_str() : target.c_str(), msg ? msg : "error");
    }
    if (lua_isnil(L_, -1)) {
      lua_pop(L_, 1);
      return keep_recorded(n);
    }
    ValueMeta v;
    default_device_ = device.empty() ? "cpu" : device;
    convert(n, v);
    if (v.kind == ValueMeta::Kind::None) {
      // A value that is not a tensor (a size, a list of sizes, a dtype): readers see it, the
      // graph's meta does not hold it.
      lua_rawseti(L_, cache_, static_cast<lua_Integer>(n) + 1);
      ++computed_count_;
      return;
    }
    if (!out_arguments.empty()) {
      lua_pop(L_, 1);
      return finish(n, fit_into_out(v, bound.front(), out_arguments));
    }
    lua_rawseti(L_, cache_, static_cast<lua_Integer>(n) + 1);  // the completed table itself
    finish(n, std::move(v), /*cached=*/true);
  }

  /// The in-place form of a view op (`squeeze_` of `squeeze.dim`, `transpose_` of
  /// `transpose.int`): it reshapes `self` as the view would. Null for other ops.
  const OpSchema* view_form(const OpSchema& s) const {
    if (s.name.empty() || s.name.back() != '_' || s.name.starts_with("__")) return nullptr;
    const std::string base = s.ns + "::" + s.name.substr(0, s.name.size() - 1);
    for (const OpSchema* o : state_of(L_).schemas()->overloads(base)) {
      if (o->arguments.size() != s.arguments.size() || o->returns.size() != 1) continue;
      const std::string& type = o->returns.front().type;
      if (type.find('(') == std::string::npos || type.find('!') != std::string::npos) continue;
      bool same = true;
      for (std::size_t i = 0; i < s.arguments.size() && same; ++i) same = o->arguments[i].name == s.arguments[i].name;
      if (same) return o;
    }
    return nullptr;
  }

  /// An `out=` call's result: each out tensor as given when the result has its shape, else
  /// resized to the result's shape (row-major), keeping the out tensor's dtype.
  ValueMeta fit_into_out(const ValueMeta& result, const BoundCall& call, const std::vector<std::size_t>& outs) {
    std::vector<ValueMeta> fitted;
    for (std::size_t k = 0; k < outs.size(); ++k) {
      const ValueMeta& r = outs.size() == 1 ? result : (k < result.elements.size() ? result.elements[k] : result);
      const Argument& given = *call.values[outs[k]];
      const ValueMeta* out = given.is_node() && computed_[given.node_id()] ? &*computed_[given.node_id()]
          : given.is_node()                                                ? &g_.meta(given.node_id()).tensor_meta
                                                                           : nullptr;
      if (out == nullptr || out->kind != ValueMeta::Kind::Tensor || r.kind != ValueMeta::Kind::Tensor) {
        fitted.push_back(r);
        continue;
      }
      if (out->tensor.shape == r.tensor.shape) {
        fitted.push_back(*out);
        continue;
      }
      ValueMeta resized = r;
      resized.tensor.dtype = out->tensor.dtype;
      resized.tensor.stride = contiguous_strides(r.tensor.shape).value_or(Dims{});
      fitted.push_back(std::move(resized));
    }
    if (fitted.size() == 1) return fitted.front();
    ValueMeta tuple;
    tuple.kind = ValueMeta::Kind::Tuple;
    tuple.elements = std::move(fitted);
    return tuple;
  }

  /// An in-place op returns the argument it writes, as it was: that argument's meta, with no
  /// meta function to call. False when the call omits that argument.
  bool written_result(NodeId n, const BoundCall& call, const std::vector<std::size_t>& which) {
    bool unknown = false;
    const int top = lua_gettop(L_);
    for (std::size_t i : which)
      if (!call.values[i]) return false;
    if (which.size() > 1) lua_createtable(L_, static_cast<int>(which.size()), 0);
    lua_Integer k = 0;
    for (std::size_t i : which) {
      push_meta_argument(L_, *call.values[i], cache_, unknown, false);
      if (which.size() > 1) lua_rawseti(L_, top + 1, ++k);
    }
    if (unknown) {
      lua_settop(L_, top);
      keep_recorded(n);
      return true;
    }
    ValueMeta v;
    convert(n, v);
    lua_settop(L_, top);
    if (v.kind == ValueMeta::Kind::None) keep_recorded(n);
    else finish(n, std::move(v));
    return true;
  }

  /// The arguments table (bound by name when a schema binds, else positional plus keywords),
  /// then the target (the schema's name when bound), then for call_module the module.
  void push_call_arguments(NodeId n, const BoundCall* bound, bool& unknown) {
    luaL_checkstack(L_, 8, "meta function arguments");
    const auto& args = g_.args(n);
    const auto& kwargs = g_.kwargs(n);
    if (bound != nullptr) {
      const OpSchema& s = *bound->schema;
      lua_createtable(L_, 0, static_cast<int>(s.arguments.size()));
      for (std::size_t i = 0; i < s.arguments.size(); ++i) {
        std::optional<Argument> value = bound->values[i];
        if (!value) value = schema_default(s.arguments[i]);
        if (!value || value->is_none()) continue;
        push_meta_argument(L_, *value, cache_, unknown, false);
        lua_setfield(L_, -2, s.arguments[i].name.c_str());
      }
      lua_pushstring(L_, schema_key(s, true).c_str());
      return;
    }
    lua_createtable(L_, static_cast<int>(args.size()), static_cast<int>(kwargs.size()) + 1);
    lua_Integer i = 0;
    for (const Argument& a : args) {
      push_meta_argument(L_, a, cache_, unknown, false);
      lua_rawseti(L_, -2, ++i);
    }
    lua_pushinteger(L_, i);
    lua_setfield(L_, -2, "n");
    for (const auto& [k, v] : kwargs) {
      push_meta_argument(L_, v, cache_, unknown, false);
      lua_setfield(L_, -2, k.c_str());
    }
    lua_pushstring(L_, g_.target(n).c_str());
    if (g_.op(n) == OpKind::CallModule) push_module(g_.target(n));
  }

  /// A call_module's module: {class =, path =, parameters = {name = meta}, settings = {...}}.
  void push_module(const std::string& path) {
    const ModuleInfo* m = session_.modules->find(path);
    lua_createtable(L_, 0, 4);
    lua_pushstring(L_, m->class_name.c_str());
    lua_setfield(L_, -2, "class");
    lua_pushstring(L_, m->path.c_str());
    lua_setfield(L_, -2, "path");
    lua_createtable(L_, 0, static_cast<int>(m->parameters.size() + m->buffers.size()));
    for (const auto* specs : {&m->parameters, &m->buffers})
      for (const TensorSpec& t : *specs) {
        push_plain_meta(L_, module_tensor_meta(t));
        lua_setfield(L_, -2, t.name.c_str());
      }
    lua_setfield(L_, -2, "parameters");
    if (!m->attributes_json.empty()) push_json(L_, m->attributes_json);
    else lua_newtable(L_);
    lua_setfield(L_, -2, "settings");
  }

  std::string input_device(NodeId n) const {
    for (NodeId in : g_.inputs(n)) {
      const ValueMeta* v = computed_[in] ? &*computed_[in] : &g_.meta(in).tensor_meta;
      if (std::string d = first_device(*v); !d.empty()) return d;
    }
    return {};
  }

  /// The value on top converted into `out` (protected: a malformed table names the node).
  void convert(NodeId n, ValueMeta& out) {
    ConvertRequest req;
    req.default_device = &default_device_;
    lua_pushcfunction(L_, convert_protected);
    lua_pushvalue(L_, -2);
    lua_pushlightuserdata(L_, &req);
    if (lua_pcall(L_, 2, 0, 0) != LUA_OK) {
      if (state_of(L_).budget().exhausted) lua_error(L_);
      const char* msg = lua_tostring(L_, -1);
      luaL_error(L_, "g:propagate_meta: node '%s' (%s): the meta function returned a bad value: %s", g_.name(n).c_str(),
                 g_.target(n).c_str(), msg ? msg : "error");
    }
    out = std::move(req.out);
  }

  void finish(NodeId n, ValueMeta v, bool cached = false) {
    ++computed_count_;
    if (!cached) set_value(n, v);
    const ValueMeta& recorded = g_.meta(n).tensor_meta;
    if (options_.check) {
      if (recorded.kind != ValueMeta::Kind::None && !same_meta(recorded, v)) mismatches_.push_back({n, recorded, v});
      return;
    }
    computed_[n] = std::move(v);
  }

  lua_State* L_;
  GraphSession& session_;
  Graph& g_;
  PropagateOptions options_;
  int cache_ = 0;
  std::optional<FunctionIndex> index_;
  std::vector<std::optional<ValueMeta>> computed_;
  std::vector<std::uint32_t> remaining_users_;  ///< readers of each node not visited yet
  std::string default_device_ = "cpu";
  lua_Integer computed_count_ = 0;
  lua_Integer kept_ = 0;
  lua_Integer unknown_ = 0;
  std::map<std::string, lua_Integer> missing_;
  std::vector<Mismatch> mismatches_;
};

/// Clears the read-only mark a failed call left (Lua errors unwind through here).
struct ReadOnlyReset {
  GraphSession& session;
  bool was;
  ~ReadOnlyReset() { session.read_only = was; }
};

/// Most tables a walk makes die young (argument tables, intermediate shapes); Lua's generational
/// collector finds them cheaply. The previous mode comes back afterwards.
struct GenerationalGc {
  lua_State* L;
  int previous = lua_gc(L, LUA_GCGEN, 0, 0);  // 0: keep the mode's parameters
  ~GenerationalGc() {
    if (previous == LUA_GCINC) lua_gc(L, LUA_GCINC, 0, 0, 0);
    else lua_gc(L, LUA_GCGEN, 0, 0);
  }
};

}  // namespace

int graph_propagate_meta(lua_State* L) {
  CheckedGraph cg = check_graph(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  const PropagateOptions options = read_options(L, 3);
  if (!options.check) require_writable(L, *cg.session);
  lua_settop(L, 3);
  ReadOnlyReset reset{*cg.session, cg.session->read_only};
  cg.session->read_only = true;  // a function that edits the graph would pull nodes from under the walk
  GenerationalGc gc{L};
  Propagation p(L, *cg.session, options, 2);
  p.run();
  if (!options.check) p.commit();
  p.push_report();
  return 1;
}

int fill_missing_meta(lua_State* L) {
  GraphSession* session = state_of(L).session(static_cast<int>(luaL_checkinteger(L, 1)));
  if (session == nullptr || session->graph == nullptr) return luaL_error(L, "the graph is gone");
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  PropagateOptions options;
  options.only_missing = true;
  ReadOnlyReset reset{*session, session->read_only};
  session->read_only = true;
  GenerationalGc gc{L};
  Propagation p(L, *session, options, 2);
  p.run();
  p.commit();
  return 0;
}

void open_meta_propagation_methods(lua_State* L, int methods) {
  const luaL_Reg graph_methods[] = {{"propagate_meta", cfunction<graph_propagate_meta>}, {nullptr, nullptr}};
  lua_pushvalue(L, methods);
  luaL_setfuncs(L, graph_methods, 0);
  lua_pop(L, 1);
}

}  // namespace graft::lua::detail
