#pragma once
// Text as taskd keeps and shows it: UTF-8, checked where a user gives it,
// and shown to people with nothing a terminal would obey.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace taskd::core {

// The offset of the first byte of `text` that is not part of well-formed
// UTF-8 (an overlong form, a surrogate or a code point past U+10FFFF is
// not); none when all of it is.
std::optional<std::size_t> invalid_utf8_at(std::string_view text);

// Bad input unless `text` is UTF-8: the message names `what` (an option, a
// key), shows the text around the first bad byte (printable) and says where
// that byte is, counted from 1.
Result<void> require_utf8(std::string_view what, std::string_view text);

// `text` with each byte that is not part of well-formed UTF-8 replaced by
// U+FFFD, as a server's text column and JSON need it.
std::string valid_utf8(std::string_view text);

// Whether printable(text) differs from `text`.
bool needs_escaping(std::string_view text);

// `text` on one line, safe for a terminal: newline and tab as \n and \t;
// every other control character (C0, DEL, C1) and every byte that is not
// part of well-formed UTF-8 as \xNN, one per byte. Backslashes stay as they
// are: this is for people to read, not to parse back.
std::string printable(std::string_view text);

// The items of a comma-separated list ("a,b,,c" has an empty third);
// "none" has none.
std::vector<std::string> list_items(std::string_view text);

}  // namespace taskd::core
