// Checks for options that take whole numbers.
#include "whole_number.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace graft::cli {

bool parse_whole_number(std::string_view text, std::uint64_t min, std::uint64_t max, std::uint64_t& value) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && value >= min && value <= max;
}

CLI::Validator whole_number(std::uint64_t min, std::uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        std::uint64_t value = 0;
        if (parse_whole_number(text, min, max, value)) return {};
        return fmt::format("'{}' is not a whole number from {} to {}", text, min, max);
      },
      "", "whole number");
}

}  // namespace graft::cli
