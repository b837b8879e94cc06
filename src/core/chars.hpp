#pragma once
// ASCII character classes of the schedule, duration and TZ syntaxes, the same
// whatever the locale.

namespace taskd::core {

constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace taskd::core
