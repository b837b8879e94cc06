#include "core/text.hpp"

#include <fmt/format.h>

namespace taskd::core {
namespace {

unsigned char byte_at(std::string_view text, std::size_t at) { return static_cast<unsigned char>(text[at]); }

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// The length of the well-formed UTF-8 sequence that starts `text` (not
// empty), or 0 if none does: the Unicode Standard's table 3-7, where the
// second byte's range rules out overlong forms, surrogates and code points
// past U+10FFFF.
std::size_t sequence_length(std::string_view text) {
  const unsigned char lead = byte_at(text, 0);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (text.size() < length || byte_at(text, 1) < low || byte_at(text, 1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if (!is_continuation(byte_at(text, i))) return 0;
  }
  return length;
}

// A control character: C0, DEL, or C1 (U+0080 to U+009F, C2 80 to C2 9F).
bool is_control(std::string_view sequence) {
  const unsigned char lead = byte_at(sequence, 0);
  if (sequence.size() == 1) return lead < 0x20 || lead == 0x7F;
  return lead == 0xC2 && byte_at(sequence, 1) < 0xA0;
}

bool is_plain_ascii(char c) { return c >= 0x20 && c < 0x7F; }

// Calls on_sequence(bytes, valid) for each well-formed sequence of `text`
// and for each byte that is not part of one.
template <class OnSequence>
void for_each_sequence(std::string_view text, OnSequence on_sequence) {
  for (std::size_t at = 0; at < text.size();) {
    auto length = sequence_length(text.substr(at));
    on_sequence(text.substr(at, length == 0 ? 1 : length), length != 0);
    at += length == 0 ? 1 : length;
  }
}

// Up to `reach` bytes of `text` on either side of `at`, cut between characters.
std::string_view around(std::string_view text, std::size_t at, std::size_t reach) {
  std::size_t start = at > reach ? at - reach : 0;
  while (start < at && is_continuation(byte_at(text, start))) ++start;
  std::size_t end = std::min(text.size(), at + reach);
  while (end < text.size() && is_continuation(byte_at(text, end))) ++end;
  return text.substr(start, end - start);
}

}  // namespace

std::optional<std::size_t> invalid_utf8_at(std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    if (static_cast<unsigned char>(text[at]) < 0x80) {
      ++at;
      continue;
    }
    auto length = sequence_length(text.substr(at));
    if (length == 0) return at;
    at += length;
  }
  return std::nullopt;
}

Result<void> require_utf8(std::string_view what, std::string_view text) {
  auto at = invalid_utf8_at(text);
  if (!at) return {};
  constexpr std::size_t reach = 32;
  auto shown = around(text, *at, reach);
  auto before = shown.data() > text.data() ? "…" : "";
  auto after = shown.data() + shown.size() < text.data() + text.size() ? "…" : "";
  return fail(ErrorKind::bad_input,
              fmt::format("{} \"{}{}{}\": not valid UTF-8 at byte {}", what, before, printable(shown), after, *at + 1));
}

std::string valid_utf8(std::string_view text) {
  if (!invalid_utf8_at(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  for_each_sequence(text, [&](std::string_view sequence, bool valid) { out += valid ? sequence : "\uFFFD"; });
  return out;
}

bool needs_escaping(std::string_view text) {
  for (std::size_t at = 0; at < text.size(); ++at) {
    if (is_plain_ascii(text[at])) continue;
    auto length = sequence_length(text.substr(at));
    if (length == 0 || is_control(text.substr(at, length))) return true;
    at += length - 1;
  }
  return false;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for_each_sequence(text, [&](std::string_view sequence, bool valid) {
    if (valid && !is_control(sequence)) {
      out += sequence;
    } else if (sequence == "\n") {
      out += "\\n";
    } else if (sequence == "\t") {
      out += "\\t";
    } else {
      for (unsigned char byte : sequence) out += fmt::format("\\x{:02x}", byte);
    }
  });
  return out;
}

std::vector<std::string> list_items(std::string_view text) {
  std::vector<std::string> items;
  if (text == "none") return items;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = std::min(text.find(',', start), text.size());
    items.emplace_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

}  // namespace taskd::core
