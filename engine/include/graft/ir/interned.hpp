// Process-wide interned strings for the few distinct values that repeat on every node
// (dtypes, devices, symbolic dim names): one pointer per use instead of one string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace graft {

/// An immutable string stored once per process. Copying is copying a pointer; equality is
/// pointer equality. The registry only grows, bounded by the number of distinct values.
class InternedString {
 public:
  InternedString();
  InternedString(std::string_view text);  // NOLINT(google-explicit-constructor)
  InternedString(const char* text) : InternedString(std::string_view(text)) {}  // NOLINT
  InternedString(const std::string& text) : InternedString(std::string_view(text)) {}  // NOLINT

  const std::string& str() const { return *p_; }
  operator std::string_view() const { return *p_; }  // NOLINT(google-explicit-constructor)
  bool empty() const { return p_->empty(); }
  /// A dense id, stable for the process lifetime (used to pack symbolic dims).
  std::uint32_t id() const;
  static InternedString from_id(std::uint32_t id);

  friend bool operator==(InternedString a, InternedString b) { return a.p_ == b.p_; }
  friend bool operator==(InternedString a, std::string_view b) { return *a.p_ == b; }

 private:
  const std::string* p_;
};

/// One tensor dimension: a concrete size, or a symbolic one such as `s0`, packed in 8 bytes.
class Dim {
 public:
  Dim(std::int64_t value = 0) : v_(value) {}  // NOLINT(google-explicit-constructor)
  Dim(int value) : v_(value) {}  // NOLINT(google-explicit-constructor)
  static Dim symbol(std::string_view name) {
    return Dim(kSymbolic - static_cast<std::int64_t>(InternedString(name).id()));
  }

  bool is_symbolic() const { return v_ <= kSymbolic; }
  /// The size; only meaningful when !is_symbolic().
  std::int64_t value() const { return v_; }
  const std::string& symbol_name() const {
    return InternedString::from_id(static_cast<std::uint32_t>(kSymbolic - v_)).str();
  }
  /// Concrete values this low are reserved for symbols (no real size or stride comes close).
  static bool representable(std::int64_t value) { return value > kSymbolic; }

  friend bool operator==(Dim a, Dim b) { return a.v_ == b.v_; }

 private:
  static constexpr std::int64_t kSymbolic = -(std::int64_t{1} << 62);
  std::int64_t v_;
};

}  // namespace graft
