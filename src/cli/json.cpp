#include "cli/json.hpp"

#include <fmt/format.h>

namespace taskd::cli {
namespace {

// Indented by two; a byte that is not UTF-8 (a row written by another
// program) becomes U+FFFD, where nlohmann's default would throw.
std::string dumped(const Json& document) { return document.dump(2, ' ', false, Json::error_handler_t::replace); }

}  // namespace

void print_json(const Json& document) { fmt::print("{}\n", dumped(document)); }

void JsonArrayWriter::add(const Json& element) {
  std::string text = dumped(element);
  // Indented one level, as an element of an array that dump(2) prints.
  std::string indented = "  ";
  indented.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    indented += c;
    if (c == '\n') indented += "  ";
  }
  fmt::print("{}{}", open_ ? ",\n" : "[\n", indented);
  open_ = true;
}

void JsonArrayWriter::finish() { fmt::print("{}", open_ ? "\n]\n" : "[]\n"); }

}  // namespace taskd::cli
