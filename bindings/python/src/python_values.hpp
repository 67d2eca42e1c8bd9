// FX values <-> graft Arguments, tensor descriptions <-> ValueMeta, inside the Python process.
//
// How FX names a function, spells a dtype or describes a tensor is defined once, in graft_fx
// (the file bridge): the Codec calls those functions and caches their answers per object, and
// converts only what needs no definition here (numbers, strings, containers, node references)
// on its own.
#pragma once

#include <pybind11/pybind11.h>

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "graft/ir/argument.hpp"
#include "graft/ir/meta.hpp"

namespace graft::python {

namespace py = pybind11;

/// One per operation (a conversion, a rewrite with its pattern and replacement): its caches hold
/// the targets and values it met, and are freed with it.
class Codec {
 public:
  /// Looks up graft_fx's definitions (imports graft_fx and torch.fx).
  Codec();

  /// The name a call_function target is written under; remembers the object for the way back.
  /// Targets that are not equal (torch.fx compares targets with ==) never share a name: a second
  /// one with the same qualified name (another closure from one factory) is `name#2`.
  const std::string& function_name(PyObject* target);
  /// The object a call_function target name stands for: one seen on the way in, else
  /// graft_fx's resolver (raises LookupError for a name nothing resolves).
  py::object function(const std::string& name);

  /// An FX argument as an Argument; `node_id` maps a torch.fx.Node (raises for a foreign one).
  /// `where` names the value in errors.
  Argument to_argument(PyObject* value, const std::function<NodeId(PyObject*)>& node_id, const std::string& where);
  /// An Argument as an FX value; `node` maps a node reference back.
  py::object from_argument(const Argument& arg, const std::function<py::object(NodeId)>& node);

  /// A node's meta through graft_fx's node_meta (only for non-empty meta dicts).
  NodeMeta node_meta(PyObject* fx_node);
  /// graft's description of a value, as graft_fx writes it (a dict, a list, or None).
  py::object describe(const ValueMeta& meta);
  /// A free-form meta value from its JSON text, as torch.fx keeps it under `key` (tuples).
  py::object meta_value(const std::string& key, const std::string& text);
  /// A module's settings (a dict of argument values) as the file's `attributes` object, JSON
  /// text (graft_fx's encoding; raises GraphFormatError for a value the file cannot hold).
  std::string settings_json(py::handle settings, const std::string& where);

  PyTypeObject* node_type() const { return reinterpret_cast<PyTypeObject*>(node_type_.ptr()); }
  /// graft_fx's key for the tensor description on an FX node.
  const py::object& tensor_meta_key() const { return tensor_meta_key_; }

 private:
  Argument to_argument(PyObject* value, const std::function<NodeId(PyObject*)>& node_id, const std::string& where,
                       int depth);
  Argument enum_argument(PyObject* value, const std::string& where);
  py::object enum_object(const char* tag, const std::string& name);
  ValueMeta value_meta(py::handle desc);

  py::object node_type_, function_name_, resolve_, encode_arg_, enum_value_, node_meta_, dumps_, meta_value_;
  py::object tensor_meta_key_;
  std::unordered_map<PyObject*, std::string> names_;  ///< function -> name (holds `held_`)
  std::unordered_map<std::string, py::object> functions_;  ///< name -> function
  std::unordered_map<std::string, std::vector<std::string>> spellings_;  ///< qualified name -> names given
  std::unordered_map<PyObject*, Argument> enums_;  ///< dtype/device/... object -> Argument
  std::unordered_map<std::string, py::object> enum_objects_;  ///< "dtype:float32" -> object
  std::vector<py::object> held_;  ///< keeps cached keys alive, so their addresses stay theirs
};

}  // namespace graft::python
