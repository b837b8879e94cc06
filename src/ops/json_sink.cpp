#include "ops/json_sink.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>

namespace taskd::ops {

Json& JsonBuilder::place(Json value) {
  if (open_.empty()) return root_ = std::move(value);
  Json& container = *open_.back();
  if (container.is_array()) {
    container.push_back(std::move(value));
    return container.back();
  }
  return container[key_] = std::move(value);
}

namespace {

// The bytes printed as they are in a JSON string: ASCII but for controls,
// '"' and '\\'.
constexpr std::array<bool, 256> plain_bytes = [] {
  std::array<bool, 256> plain{};
  for (int byte = 0x20; byte < 0x7f; ++byte) plain[byte] = byte != '"' && byte != '\\';
  return plain;
}();

// Whether any byte of the eight in `word` is zero; any below `least`
// (up to 0x80). Exact as answers for the whole word (not for which byte).
constexpr std::uint64_t byte_ones = 0x0101010101010101;
constexpr std::uint64_t byte_highs = 0x8080808080808080;
constexpr std::uint64_t any_below(std::uint64_t word, std::uint64_t least) {
  return (word - byte_ones * least) & ~word & byte_highs;
}
constexpr std::uint64_t any_zero(std::uint64_t word) { return any_below(word, 1); }

// Whether the eight bytes of `word` are all printed as they are.
constexpr bool plain_word(std::uint64_t word) {
  return (any_below(word, 0x20) | (word & byte_highs) | any_zero(word ^ (byte_ones * 0x7f)) |
          any_zero(word ^ (byte_ones * '"')) | any_zero(word ^ (byte_ones * '\\'))) == 0;
}

template <class Word>
Word word_at(const char* bytes) {
  Word word;
  std::memcpy(&word, bytes, sizeof word);
  return word;
}

// Printed as it is: no escape, and UTF-8 only if ASCII. Eight bytes at a
// time, the last eight of the text overlapping those before (a text of four
// to seven bytes: its first four and its last four); a shorter one a table
// look-up a byte. Without a branch a byte: a task is sixty keys and strings.
bool plain_ascii(std::string_view text) {
  const char* bytes = text.data();
  auto size = text.size();
  if (size >= 8) {
    bool plain = true;
    for (std::size_t at = 0; at + 8 < size; at += 8) plain &= plain_word(word_at<std::uint64_t>(bytes + at));
    return plain && plain_word(word_at<std::uint64_t>(bytes + size - 8));
  }
  if (size >= 4)
    return plain_word(word_at<std::uint32_t>(bytes) | std::uint64_t{word_at<std::uint32_t>(bytes + size - 4)} << 32);
  bool plain = true;
  for (char c : text) plain &= plain_bytes[static_cast<unsigned char>(c)];
  return plain;
}

}  // namespace

void JsonTextWriter::open(char opening, char closing) {
  start_value();
  out_.push_back(opening);
  open_.push_back({closing, layout_ == JsonLayout::indented || (open_.empty() && closing == ']')});
}

void JsonTextWriter::end() {
  auto closed = open_.back();
  open_.pop_back();
  if (closed.has_items && closed.broken_into_lines) next_line();
  out_.push_back(closed.closing);
}

void JsonTextWriter::next_line() {
  if (layout_ == JsonLayout::compact) return out_.push_back('\n');
  static constexpr std::string_view newline_and_indents =
      "\n                                                                ";
  auto width = 1 + 2 * open_.size();
  text(newline_and_indents.substr(0, width));
  for (; width > newline_and_indents.size(); width -= 2) text("  ");
}

void JsonTextWriter::start_value() {
  if (std::exchange(after_key_, false) || open_.empty()) return;
  if (std::exchange(open_.back().has_items, true)) out_.push_back(',');
  if (open_.back().broken_into_lines) next_line();
}

void JsonTextWriter::key(std::string_view name) {
  if (layout_ == JsonLayout::compact && plain_ascii(name)) {
    compact_key(name);
  } else {
    start_value();
    quoted(name, layout_ == JsonLayout::compact ? "\":" : "\": ");
  }
  after_key_ = true;
}

// The key of a member of a compact object (which is never broken into
// lines), with the comma before it: a task is sixty, each written at once.
void JsonTextWriter::compact_key(std::string_view name) {
  bool comma = std::exchange(open_.back().has_items, true);
  auto size = out_.size();
  out_.resize(size + comma + name.size() + 3);
  char* at = out_.data() + size;
  if (comma) *at++ = ',';
  *at++ = '"';
  at = std::copy(name.begin(), name.end(), at);
  *at++ = '"';
  *at = ':';
}

void JsonTextWriter::null() {
  start_value();
  text("null");
}

void JsonTextWriter::boolean(bool value) {
  start_value();
  text(value ? "true" : "false");
}

void JsonTextWriter::integer(std::int64_t value) {
  start_value();
  fmt::format_int digits(value);
  text({digits.data(), digits.size()});
}

// As a document prints it (its own shortest form), rare enough to borrow.
void JsonTextWriter::number(double value) {
  start_value();
  text(Json(value).dump());
}

void JsonTextWriter::string(std::string_view value) {
  start_value();
  quoted(value);
}

// A string that needs escapes, or is not ASCII (a byte that is not UTF-8
// becomes U+FFFD), is printed as a document prints it.
void JsonTextWriter::quoted(std::string_view value, std::string_view closing) {
  if (!plain_ascii(value)) {
    text(Json(std::string(value)).dump(-1, ' ', false, Json::error_handler_t::replace));
    return text(closing.substr(1));
  }
  // Grown once: a task is sixty keys and strings.
  auto size = out_.size();
  out_.resize(size + 1 + value.size() + closing.size());
  char* at = out_.data() + size;
  *at = '"';
  at = std::copy(value.begin(), value.end(), at + 1);
  std::copy(closing.begin(), closing.end(), at);
}

void JsonTextWriter::document(const Json& value) {
  switch (value.type()) {
    case Json::value_t::object:
      begin_object();
      for (const auto& [name, item] : value.items()) {
        key(name);
        document(item);
      }
      return end();
    case Json::value_t::array:
      begin_array();
      for (const auto& item : value) document(item);
      return end();
    case Json::value_t::string: return string(value.get_ref<const std::string&>());
    case Json::value_t::boolean: return boolean(value.get<bool>());
    case Json::value_t::number_integer: return integer(value.get<std::int64_t>());
    case Json::value_t::number_unsigned:
      start_value();
      fmt::format_to(std::back_inserter(out_), "{}", value.get<std::uint64_t>());
      return;
    case Json::value_t::number_float: return number(value.get<double>());
    default: return null();
  }
}

}  // namespace taskd::ops
