// Checks for options that take whole numbers.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

#include <CLI/CLI.hpp>

namespace graft::cli {

/// A whole number from `min` to `max`, in decimal digits and nothing else. CLI11 alone reads
/// "-1" into an unsigned option as its largest value and a number past the type's range as that
/// type's largest, without a word; with this check each is refused, naming the option and the
/// value.
CLI::Validator whole_number(std::uint64_t min = 0, std::uint64_t max = std::numeric_limits<std::uint64_t>::max());

/// Reads `text` as whole_number does; false when it is not one from `min` to `max`.
bool parse_whole_number(std::string_view text, std::uint64_t min, std::uint64_t max, std::uint64_t& value);

}  // namespace graft::cli
