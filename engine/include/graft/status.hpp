// Expected failures as values: a Diagnostic says where (file, line, JSON path, node) and what.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace graft {

/// Where and why something failed. Empty fields are simply not printed.
struct Diagnostic {
  std::string file{};  ///< file the problem is in, if any
  int line = 0;  ///< 1-based line, 0 when unknown
  int column = 0;  ///< 1-based column, 0 when unknown
  std::string path{};  ///< JSON path such as `$.nodes[3].args[0]`
  std::string node{};  ///< graph node the problem is about
  std::string message{};  ///< what went wrong, one sentence, no trailing period

  /// `file:line:col: $.path: node 'x': message`
  std::string to_string() const;
};

/// Success, or a Diagnostic.
class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status ok() { return {}; }
  static Status error(Diagnostic d) {
    Status s;
    s.diag_ = std::move(d);
    return s;
  }
  static Status error(std::string message) { return error(Diagnostic{.message = std::move(message)}); }
  static Status node_error(std::string node, std::string message) {
    return error(Diagnostic{.node = std::move(node), .message = std::move(message)});
  }

  bool is_ok() const { return !diag_.has_value(); }
  explicit operator bool() const { return is_ok(); }
  const Diagnostic& diagnostic() const { return *diag_; }
  Diagnostic& diagnostic() { return *diag_; }
  std::string message() const { return is_ok() ? std::string("ok") : diag_->to_string(); }

 private:
  std::optional<Diagnostic> diag_;
};

/// A value, or the Status that explains why there is none.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool is_ok() const { return value_.has_value(); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace graft
