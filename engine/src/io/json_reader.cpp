// Graph file reader: simdjson's DOM parser, then a strict walk that names the JSON path of
// anything wrong. Canonical files take canonical_reader.cpp's faster path first. Syntax errors
// get their line and column from a second, slower parse by nlohmann::json, which reports byte
// positions (simdjson does not).
#include <simdjson.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_set>

#include "graft/io/format_fields.hpp"
#include "graft/io/graph_json.hpp"
#include "graft/io/json_text.hpp"
#include "io/canonical_reader.hpp"
#include "io/dom_reader.hpp"
#include "io/file_buffer.hpp"

namespace graft {

using detail::DomReader;
using detail::GraphScope;
using detail::LoadError;
using detail::NodeScope;

namespace {

namespace dom = simdjson::dom;
using dom::element_type;

// A JSON path as a chain of stack frames: free to build, rendered only on error.
struct Path {
  const Path* parent = nullptr;
  std::string_view key;
  std::int64_t index = -1;
  Path at(std::string_view k) const { return Path{this, k, -1}; }
  Path at(std::size_t i) const { return Path{this, {}, static_cast<std::int64_t>(i)}; }
  std::string render() const {
    std::string tail;
    for (const Path* p = this; p && p->parent; p = p->parent) {
      std::string seg = p->index >= 0 ? "[" + std::to_string(p->index) + "]" : "." + std::string(p->key);
      tail.insert(0, seg);
    }
    return "$" + tail;
  }
};

[[noreturn]] void fail(const Path& at, std::string message) { throw LoadError{at.render(), std::move(message)}; }

const char* type_name(element_type t) {
  switch (t) {
    case element_type::ARRAY: return "an array";
    case element_type::OBJECT: return "an object";
    case element_type::INT64:
    case element_type::UINT64: return "an integer";
    case element_type::DOUBLE: return "a float";
    case element_type::STRING: return "a string";
    case element_type::BOOL: return "a boolean";
    case element_type::NULL_VALUE: return "null";
  }
  return "a value";
}

// Unchecked views for elements whose type was already tested.
dom::object object_of(dom::element e) {
  dom::object o;
  [[maybe_unused]] simdjson::error_code err = e.get(o);
  return o;
}
dom::array array_of(dom::element e) {
  dom::array a;
  [[maybe_unused]] simdjson::error_code err = e.get(a);
  return a;
}

dom::object as_object(dom::element e, const Path& at) {
  if (e.type() != element_type::OBJECT) fail(at, std::string("expected an object, found ") + type_name(e.type()));
  return object_of(e);
}
dom::array as_array(dom::element e, const Path& at) {
  if (e.type() != element_type::ARRAY) fail(at, std::string("expected an array, found ") + type_name(e.type()));
  return array_of(e);
}
std::string_view as_string(dom::element e, const Path& at) {
  if (e.type() != element_type::STRING) fail(at, std::string("expected a string, found ") + type_name(e.type()));
  return e.get_string().value_unsafe();
}
std::int64_t as_int(dom::element e, const Path& at) {
  if (e.type() == element_type::UINT64) fail(at, "integer does not fit in 64 bits");
  if (e.type() != element_type::INT64) fail(at, std::string("expected an integer, found ") + type_name(e.type()));
  return e.get_int64().value_unsafe();
}

// Objects of the format have fixed keys: each may appear once, unknown ones are errors.
template <std::size_t N>
class KeySet {
 public:
  explicit KeySet(const std::array<std::string_view, N>& keys) : keys_(keys) {}
  std::size_t index(std::string_view key, const Path& obj) {
    for (std::size_t i = 0; i < N; ++i) {
      if (keys_[i] == key) {
        if (seen_[i]) fail(obj.at(key), "duplicate key");
        seen_[i] = true;
        return i;
      }
    }
    std::string expected;
    for (std::string_view k : keys_) expected += (expected.empty() ? "" : ", ") + std::string(k);
    fail(obj, "unknown key " + quoted_text(key) + " (expected: " + expected + ")");
  }
  void require(std::size_t i, const Path& obj) const {
    if (!seen_[i]) fail(obj, "missing key '" + std::string(keys_[i]) + "'");
  }
  /// Every field the table says is required was seen.
  void require_all(const std::array<format::Field, N>& fields, const Path& obj) const {
    for (std::size_t i = 0; i < N; ++i)
      if (fields[i].required) require(i, obj);
  }

 private:
  std::array<std::string_view, N> keys_;
  std::array<bool, N> seen_{};
};

// Detects a repeated key: a linear scan for the usual handful, a hash set past that, so a
// hostile object with 300k keys is not quadratic.
class UniqueKeys {
 public:
  bool insert(std::string_view key) {
    if (set_.empty()) {
      if (std::find(small_.begin(), small_.end(), key) != small_.end()) return false;
      small_.push_back(key);
      if (small_.size() > 16) set_.insert(small_.begin(), small_.end());
      return true;
    }
    return set_.insert(key).second;
  }

 private:
  std::vector<std::string_view> small_;
  std::unordered_set<std::string_view> set_;
};

// Free-form metadata is re-spelled canonically, keeping keys in order and values as they are.
void canonical_json(std::string& out, dom::element e, const Path& at) {
  switch (e.type()) {
    case element_type::OBJECT: {
      out += '{';
      bool first = true;
      UniqueKeys unique;
      for (dom::key_value_pair kv : object_of(e)) {
        if (!unique.insert(kv.key)) fail(at.at(kv.key), "duplicate key");
        if (!first) out += ',';
        first = false;
        detail::append_json_string(out, kv.key);
        out += ':';
        canonical_json(out, kv.value, at.at(kv.key));
      }
      out += '}';
      return;
    }
    case element_type::ARRAY: {
      out += '[';
      std::size_t i = 0;
      for (dom::element item : array_of(e)) {
        if (i) out += ',';
        canonical_json(out, item, at.at(i++));
      }
      out += ']';
      return;
    }
    case element_type::INT64: detail::append_int(out, e.get_int64().value_unsafe()); return;
    case element_type::UINT64: out += std::to_string(e.get_uint64().value_unsafe()); return;
    case element_type::DOUBLE: detail::append_python_float(out, e.get_double().value_unsafe()); return;
    case element_type::STRING: detail::append_json_string(out, e.get_string().value_unsafe()); return;
    case element_type::BOOL: out += e.get_bool().value_unsafe() ? "true" : "false"; return;
    case element_type::NULL_VALUE: out += "null"; return;
  }
}

}  // namespace

namespace detail {

class DomWalk {
 public:
  GraphModule read(dom::element root) {
    Path top;
    dom::object doc = as_object(root, top);
    // format and version first: a newer file should say so, not fail on a key we do not know.
    dom::element format, version;
    if (doc["format"].get(format)) fail(top, "missing key 'format' (is this a graft graph file?)");
    if (as_string(format, top.at("format")) != "graft-graph")
      fail(top.at("format"),
           "expected \"graft-graph\", found \"" + escape_text(format.get_string().value_unsafe()) + "\"");
    if (doc["version"].get(version)) fail(top, "missing key 'version'");
    std::int64_t v = as_int(version, top.at("version"));
    if (v != kGraphFormatVersion)
      fail(top.at("version"),
           "unsupported format version " + std::to_string(v) + " (this graft reads version " +
               std::to_string(kGraphFormatVersion) + ")");

    GraphModule gm;
    using format::DocumentField;
    KeySet<5> keys(format::kDocumentKeys);
    for (dom::key_value_pair kv : doc) {
      Path at = top.at(kv.key);
      switch (static_cast<DocumentField>(keys.index(kv.key, top))) {
        case DocumentField::Meta: {
          as_object(kv.value, at);
          gm.meta_json.clear();
          canonical_json(gm.meta_json, kv.value, at);
          break;
        }
        case DocumentField::Modules: {
          std::size_t i = 0;
          for (dom::element m : as_array(kv.value, at)) {
            Path mp = at.at(i++);
            ModuleInfo info = module(m, mp);
            std::string path = info.path;
            if (!gm.modules.add(std::move(info))) fail(mp.at("path"), "duplicate module path " + quoted_text(path));
          }
          break;
        }
        case DocumentField::Nodes: nodes(kv.value, at, gm.graph); break;
        case DocumentField::Format:
        case DocumentField::Version: break;  // checked first, above
      }
    }
    keys.require_all(format::kDocumentFields, top);
    return gm;
  }

  /// One node of the root graph, read on its own (the canonical fast path).
  void root_node(dom::element e, std::size_t index, NodeScope& scope) {
    Path top;
    Path nodes_path = top.at("nodes");
    node(e, nodes_path.at(index), scope);
  }

  /// One module of the table, read on its own (the canonical fast path).
  void root_module(dom::element e, std::size_t index, ModuleTable& modules) {
    Path top;
    Path modules_path = top.at("modules");
    Path mp = modules_path.at(index);
    ModuleInfo info = module(e, mp);
    std::string path = info.path;
    if (!modules.add(std::move(info))) fail(mp.at("path"), "duplicate module path " + quoted_text(path));
  }

 private:
  void nodes(dom::element e, const Path& at, Graph& g) {
    dom::array arr = as_array(e, at);
    g.reserve(arr.size());
    GraphScope scope(g);
    std::size_t i = 0;
    for (dom::element n : arr) node(n, at.at(i++), scope);
  }

  void node(dom::element e, const Path& at, NodeScope& g) {
    dom::object obj = as_object(e, at);
    using format::NodeField;
    KeySet<6> keys(format::kNodeKeys);
    std::string_view name, target;
    OpKind op{};
    std::vector<Argument> args;
    Kwargs kwargs;
    NodeMeta meta;
    for (dom::key_value_pair kv : obj) {
      Path p = at.at(kv.key);
      switch (static_cast<NodeField>(keys.index(kv.key, at))) {
        case NodeField::Name: name = as_string(kv.value, p); break;
        case NodeField::Op:
          if (!parse_op_kind(as_string(kv.value, p), op))
            fail(p,
                 "unknown op " + quoted_text(kv.value.get_string().value_unsafe()) +
                     " (expected placeholder, get_attr, call_function, call_method, call_module or output)");
          break;
        case NodeField::Target: target = as_string(kv.value, p); break;
        case NodeField::Args: {
          dom::array arr = as_array(kv.value, p);
          args.reserve(arr.size());  // one allocation per vector: a million nodes make millions
          std::size_t i = 0;
          for (dom::element a : arr) args.push_back(argument(a, p.at(i++), g));
          break;
        }
        case NodeField::Kwargs: {
          UniqueKeys unique;
          for (dom::key_value_pair kw : as_object(kv.value, p)) {
            if (!unique.insert(kw.key)) fail(p.at(kw.key), "duplicate keyword argument");
            kwargs.emplace_back(std::string(kw.key), argument(kw.value, p.at(kw.key), g));
          }
          break;
        }
        case NodeField::Meta: meta = node_meta(kv.value, p); break;
      }
    }
    keys.require_all(format::kNodeFields, at);
    if (name.empty()) fail(at.at("name"), "node name is empty");
    if (target.empty() && op != OpKind::Output) fail(at.at("target"), "target is empty");
    if (!g.add(op, target, std::move(args), std::move(kwargs), name, std::move(meta)))
      fail(at.at("name"), "duplicate node name " + quoted_text(name));
  }

  Argument argument(dom::element e, const Path& at, NodeScope& g) {
    switch (e.type()) {
      case element_type::NULL_VALUE: return NoneValue{};
      case element_type::BOOL: return e.get_bool().value_unsafe();
      case element_type::INT64: return e.get_int64().value_unsafe();
      case element_type::UINT64: fail(at, "integer does not fit in 64 bits");
      case element_type::DOUBLE: return e.get_double().value_unsafe();
      case element_type::STRING: return std::string(e.get_string().value_unsafe());
      case element_type::ARRAY: return List{items(e, at, g)};
      case element_type::OBJECT: return tagged(object_of(e), at, g);
    }
    fail(at, "unreadable argument");
  }

  std::vector<Argument> items(dom::element e, const Path& at, NodeScope& g) {
    dom::array arr = as_array(e, at);
    std::vector<Argument> out;
    out.reserve(arr.size());
    std::size_t i = 0;
    for (dom::element item : arr) out.push_back(argument(item, at.at(i++), g));
    return out;
  }

  Argument tagged(dom::object obj, const Path& at, NodeScope& g) {
    if (obj.size() != 1)
      fail(at,
           "a tagged argument has exactly one key (node, tuple, dict, slice, ellipsis, float, dtype, device, layout, "
           "memory_format)");
    dom::key_value_pair kv = *obj.begin();
    Path p = at.at(kv.key);
    std::string_view tag = kv.key;
    if (tag == "node") {
      std::string_view name = as_string(kv.value, p);
      NodeId id = g.find(name);
      if (id == kNoNode) fail(p, "unknown node " + quoted_text(name) + " (a node may only use nodes listed before it)");
      return Argument::node(id);
    }
    if (tag == "tuple") return Tuple{items(kv.value, p, g)};
    if (tag == "slice") {
      std::vector<Argument> parts = items(kv.value, p, g);
      if (parts.size() != 3) fail(p, "a slice has 3 parts (start, stop, step), found " + std::to_string(parts.size()));
      return Slice{std::move(parts)};
    }
    if (tag == "ellipsis") {
      if (!kv.value.is_null()) fail(p, "Python's Ellipsis is written {\"ellipsis\":null}");
      return EllipsisValue{};
    }
    if (tag == "dict") {
      Dict d;
      std::size_t i = 0;
      for (dom::element pair : as_array(kv.value, p)) {
        Path pp = p.at(i++);
        std::vector<Argument> kvp = items(pair, pp, g);
        if (kvp.size() != 2) fail(pp, "a dict entry is a [key, value] pair");
        d.add(std::move(kvp[0]), std::move(kvp[1]));
      }
      return d;
    }
    if (tag == "float") {
      std::string_view v = as_string(kv.value, p);
      if (v == "inf") return std::numeric_limits<double>::infinity();
      if (v == "-inf") return -std::numeric_limits<double>::infinity();
      if (v == "nan") return std::numeric_limits<double>::quiet_NaN();
      fail(p, "expected \"inf\", \"-inf\" or \"nan\", found \"" + escape_text(v) + "\"");
    }
    if (tag == "dtype") return DType{std::string(as_string(kv.value, p))};
    if (tag == "device") return Device{std::string(as_string(kv.value, p))};
    if (tag == "layout") return Layout{std::string(as_string(kv.value, p))};
    if (tag == "memory_format") return MemoryFormat{std::string(as_string(kv.value, p))};
    fail(at,
         "unknown argument tag " + quoted_text(tag) +
             " (expected node, tuple, dict, slice, ellipsis, float, dtype, device, layout or memory_format)");
  }

  NodeMeta node_meta(dom::element e, const Path& at) {
    NodeMeta meta;
    UniqueKeys unique;
    for (dom::key_value_pair kv : as_object(e, at)) {
      Path p = at.at(kv.key);
      if (!unique.insert(kv.key)) fail(p, "duplicate key");
      if (kv.key == "tensor_meta") {
        meta.tensor_meta = value_meta(kv.value, p);
        if (meta.tensor_meta.kind == ValueMeta::Kind::None) fail(p, "tensor_meta is null; leave the key out instead");
        continue;
      }
      std::string json;
      canonical_json(json, kv.value, p);
      meta.extra.emplace_back(std::string(kv.key), std::move(json));
    }
    return meta;
  }

  ValueMeta value_meta(dom::element e, const Path& at) {
    ValueMeta v;
    if (e.type() == element_type::NULL_VALUE) return v;
    if (e.type() == element_type::ARRAY) {
      v.kind = ValueMeta::Kind::Tuple;
      dom::array arr = array_of(e);
      v.elements.reserve(arr.size());
      std::size_t i = 0;
      for (dom::element item : arr) v.elements.push_back(value_meta(item, at.at(i++)));
      return v;
    }
    dom::object obj = as_object(e, at);
    v.kind = ValueMeta::Kind::Tensor;
    using format::TensorMetaField;
    KeySet<4> keys(format::kTensorMetaKeys);
    for (dom::key_value_pair kv : obj) {
      Path p = at.at(kv.key);
      switch (static_cast<TensorMetaField>(keys.index(kv.key, at))) {
        case TensorMetaField::Shape: v.tensor.shape = shape(kv.value, p); break;
        case TensorMetaField::Dtype: v.tensor.dtype = interned(as_string(kv.value, p)); break;
        case TensorMetaField::Stride: v.tensor.stride = dims(kv.value, p); break;
        case TensorMetaField::Device: v.tensor.device = interned(as_string(kv.value, p)); break;
      }
    }
    keys.require_all(format::kTensorMetaFields, at);
    return v;
  }

  Dims shape(dom::element e, const Path& at) {
    Dims out = dims(e, at);
    for (std::size_t i = 0; i < out.size(); ++i)
      if (!out[i].is_symbolic() && out[i].value() < 0) fail(at.at(i), "a size cannot be negative");
    return out;
  }

  Dims dims(dom::element e, const Path& at) {
    dom::array arr = as_array(e, at);
    Dims out;
    out.reserve(arr.size());
    std::size_t i = 0;
    for (dom::element d : arr) {
      Path p = at.at(i++);
      if (d.type() == element_type::STRING) {
        out.push_back(Dim::symbol(d.get_string().value_unsafe()));
        continue;
      }
      std::int64_t v = as_int(d, p);
      if (!Dim::representable(v)) fail(p, "dimension " + std::to_string(v) + " is out of range");
      out.emplace_back(v);
    }
    return out;
  }

  std::vector<TensorSpec> tensor_specs(dom::element e, const Path& at) {
    std::vector<TensorSpec> out;
    std::size_t i = 0;
    for (dom::element t : as_array(e, at)) {
      Path p = at.at(i++);
      using format::TensorSpecField;
      KeySet<format::kTensorSpecFields.size()> keys(format::kTensorSpecKeys);
      TensorSpec spec;
      for (dom::key_value_pair kv : as_object(t, p)) {
        Path q = p.at(kv.key);
        switch (static_cast<TensorSpecField>(keys.index(kv.key, p))) {
          case TensorSpecField::Name: spec.name = as_string(kv.value, q); break;
          case TensorSpecField::Shape: spec.shape = shape(kv.value, q); break;
          case TensorSpecField::Dtype: spec.dtype = interned(as_string(kv.value, q)); break;
          case TensorSpecField::Data: spec.data = std::string(as_string(kv.value, q)); break;
          case TensorSpecField::Stride: spec.stride = shape(kv.value, q); break;
          case TensorSpecField::Device: spec.device = std::string(as_string(kv.value, q)); break;
        }
      }
      keys.require_all(format::kTensorSpecFields, p);
      if (spec.name.empty() || spec.name.find('.') != std::string::npos)
        fail(p.at("name"), "a parameter or buffer name is one non-empty segment without dots");
      if (spec.stride && spec.stride->size() != spec.shape.size())
        fail(p.at("stride"), "one stride per dim of the shape");
      out.push_back(std::move(spec));
    }
    return out;
  }

  // Dtypes and devices repeat on nearly every node: remembering the last few spares the
  // process-wide registry (and its lock) a lookup per node.
  InternedString interned(std::string_view text) {
    for (const InternedString& s : recent_)
      if (s == text) return s;
    recent_[next_recent_] = InternedString(text);
    InternedString s = recent_[next_recent_];
    next_recent_ = (next_recent_ + 1) % recent_.size();
    return s;
  }

  ModuleInfo module(dom::element e, const Path& at) {
    using format::ModuleField;
    ModuleInfo info;
    KeySet<8> keys(format::kModuleKeys);
    for (dom::key_value_pair kv : as_object(e, at)) {
      Path p = at.at(kv.key);
      switch (static_cast<ModuleField>(keys.index(kv.key, at))) {
        case ModuleField::Path: info.path = as_string(kv.value, p); break;
        case ModuleField::Class: info.class_name = as_string(kv.value, p); break;
        case ModuleField::Parameters: info.parameters = tensor_specs(kv.value, p); break;
        case ModuleField::Buffers: info.buffers = tensor_specs(kv.value, p); break;
        case ModuleField::Graph: {
          KeySet<1> gkeys(format::kModuleGraphKeys);
          info.graph.emplace();
          for (dom::key_value_pair gkv : as_object(kv.value, p)) {
            gkeys.index(gkv.key, p);
            nodes(gkv.value, p.at(gkv.key), *info.graph);
          }
          gkeys.require_all(format::kModuleGraphFields, p);
          break;
        }
        case ModuleField::Attributes:
          if (kv.value.type() != element_type::OBJECT) fail(p, "expected an object of the module's settings");
          canonical_json(info.attributes_json, kv.value, p);
          break;
        case ModuleField::Origin:
          info.origin = as_string(kv.value, p);
          if (info.origin.empty()) fail(p, "an origin names a module of the original model: not empty");
          break;
        case ModuleField::Opaque:
          info.opaque = as_string(kv.value, p);
          if (info.opaque.empty()) fail(p, "say why the module is opaque: the reason is not empty");
          break;
      }
    }
    keys.require_all(format::kModuleFields, at);
    if (info.graph && !info.opaque.empty()) fail(at.at("opaque"), "a module with a graph is not opaque");
    return info;
  }

  std::array<InternedString, 4> recent_{};
  std::size_t next_recent_ = 0;
};

DomReader::DomReader() : walk_(std::make_unique<DomWalk>()) {}
DomReader::~DomReader() = default;
GraphModule DomReader::read(dom::element root) { return walk_->read(root); }
void DomReader::root_node(dom::element e, std::size_t index, NodeScope& scope) { walk_->root_node(e, index, scope); }
void DomReader::root_module(dom::element e, std::size_t index, ModuleTable& modules) {
  walk_->root_module(e, index, modules);
}

std::string root_node_path(std::size_t index) {
  Path top;
  Path nodes = top.at("nodes");
  return nodes.at(index).render();
}

}  // namespace detail

namespace {

// A SAX handler that accepts everything: we only want nlohmann's error position.
struct NullSax : nlohmann::json_sax<nlohmann::json> {
  std::size_t error_byte = 0;
  std::string error_text;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    error_byte = position;
    error_text = ex.what();
    return false;
  }
};

Status syntax_error(std::string_view text, std::string_view source, simdjson::error_code code) {
  Diagnostic d{.file = std::string(source), .message = std::string("invalid JSON: ") + simdjson::error_message(code)};
  if (text.starts_with("\xef\xbb\xbf")) {  // JSON (RFC 8259) has none; nlohmann would skip it
    d.line = d.column = 1;
    d.message = "the file starts with a UTF-8 byte order mark (EF BB BF); graph files are UTF-8 without one";
    return Status::error(std::move(d));
  }
  NullSax sax;
  nlohmann::json::sax_parse(text.begin(), text.end(), &sax);
  if (sax.error_byte > 0) {
    std::size_t pos = std::min(sax.error_byte - 1, text.size());  // nlohmann counts from 1
    int line = 1;
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < pos; ++i)
      if (text[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    d.line = line;
    d.column = static_cast<int>(pos - line_start) + 1;
    // nlohmann's message names the offending token, e.g. "syntax error while parsing object - unexpected '}'".
    std::string what = sax.error_text;
    std::size_t colon = what.find(": ");
    std::size_t tail = what.find("syntax error");
    d.message = "invalid JSON: " +
        (tail != std::string::npos        ? what.substr(tail)
             : colon != std::string::npos ? what.substr(colon + 2)
                                          : what);
  }
  return Status::error(std::move(d));
}

// One DOM parser per thread, kept between loads: its buffers (about three times the largest
// file loaded, touched once) are most of what a load costs on a cold heap, so a host that
// reloads graphs pays for them once. Above kKeepParserBytes of JSON the parser is dropped
// after use; release_parser_memory() drops it at once.
constexpr std::size_t kKeepParserBytes = std::size_t{512} << 20;
thread_local std::unique_ptr<dom::parser> t_parser;

dom::parser& parser_for(std::size_t size) {
  if (!t_parser) t_parser = std::make_unique<dom::parser>();
  dom::parser& parser = *t_parser;
  if (parser.capacity() < size) {
    if (parser.allocate(size) != simdjson::SUCCESS) {
      // Out of memory: simdjson may keep the buffers it got and not the ones it did not (its
      // parse then checks the capacity, not the depth stacks, and reads through a null
      // pointer). A new parser allocates all in parse, or fails there with MEMALLOC.
      t_parser = std::make_unique<dom::parser>();
      return *t_parser;
    }
    // Ask for huge pages before the buffers are first touched. `implementation` and `doc`
    // are public members simdjson documents as internal; they have been stable for years.
    detail::advise_huge_pages(parser.implementation->structural_indexes.get(), size * sizeof(std::uint32_t));
    detail::advise_huge_pages(parser.doc.tape.get(), size * sizeof(std::uint64_t));
    detail::advise_huge_pages(parser.doc.string_buf.get(), size);
  }
  return parser;
}

// `text` must be followed by simdjson::SIMDJSON_PADDING readable bytes.
Result<GraphModule> parse_with_padding(const char* text, std::size_t size, std::string_view source) {
  if (std::optional<Result<GraphModule>> fast = detail::parse_canonical(text, size, source)) return std::move(*fast);
  struct DropLargeParser {
    std::size_t size;
    ~DropLargeParser() {
      if (size > kKeepParserBytes) t_parser.reset();
    }
  } drop{size};
  dom::parser& parser = parser_for(size);
  dom::element root;
  if (simdjson::error_code code = parser.parse(reinterpret_cast<const std::uint8_t*>(text), size, false).get(root);
      code != simdjson::SUCCESS) {
    if (code == simdjson::MEMALLOC) {  // not the file's fault; and the parser may be half allocated
      t_parser.reset();
      return Status::error(Diagnostic{.file = std::string(source), .message = "out of memory while parsing"});
    }
    return syntax_error(std::string_view(text, size), source, code);
  }
  try {
    return DomReader{}.read(root);
  } catch (const LoadError& e) {
    return Status::error(Diagnostic{.file = std::string(source), .path = e.path, .message = e.message});
  }
}

}  // namespace

Result<GraphModule> parse_graph_json(std::string_view text, std::string_view source) {
  simdjson::padded_string padded(text);
  return parse_with_padding(padded.data(), padded.size(), source);
}

void release_parser_memory() { t_parser.reset(); }

Result<GraphModule> load_graph_file(const std::string& path) {
  if (std::optional<Result<GraphModule>> streamed = detail::parse_canonical_file(path)) return std::move(*streamed);
  detail::FileBuffer buffer;
  if (Status s = buffer.read(path, simdjson::SIMDJSON_PADDING); !s) return s;
  return parse_with_padding(buffer.data(), buffer.size(), path);
}

}  // namespace graft
