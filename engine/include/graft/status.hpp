// Expected failures as values: a Diagnostic says where (file, line, JSON path, node) and what.
#pragma once

#include <optional>
#include <string>
#include <string_view>
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

  /// `file:line:col: $.path: node 'x': message`, the file, path and node escaped with
  /// escape_text and the message with escape_message.
  std::string to_string() const;
};

/// `text` as a diagnostic quotes it: control characters (line breaks too), bidirectional-text
/// controls, line and paragraph separators and bytes that are not UTF-8 are written as escapes
/// (`\n`, `\x00`, `\u202e`), so that what a file holds can neither start a line of its own in
/// a log nor reorder what a terminal shows. Other text is kept as it is.
std::string escape_text(std::string_view text);
/// escape_text keeping line breaks and tabs: for a whole message, whose line breaks are graft's
/// own once what it quotes went through escape_text (or quoted_text()).
std::string escape_message(std::string_view text);
/// `'text'`, escaped with escape_text: how a diagnostic quotes a name, a key or a target it read.
std::string quoted_text(std::string_view text);

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
