#include "cli/json.hpp"

#include <fmt/format.h>

namespace taskd::cli {
namespace {

// Indented by two; a byte that is not UTF-8 (a row written by another
// program) becomes U+FFFD, where nlohmann's default would throw.
std::string dumped(const Json& document) { return document.dump(2, ' ', false, Json::error_handler_t::replace); }

}  // namespace

void print_json(const Json& document) { fmt::print("{}\n", dumped(document)); }

JsonArrayWriter::JsonArrayWriter() { writer_.begin_array(); }

// Nothing is printed for an error before the first element.
JsonArrayWriter::~JsonArrayWriter() {
  if (any_) flush();
}

void JsonArrayWriter::add(const Json& element) {
  writer_.document(element);
  added();
}

void JsonArrayWriter::added() {
  any_ = true;
  if (text_.size() >= 64 * 1024) flush();
}

void JsonArrayWriter::flush() {
  std::fwrite(text_.data(), 1, text_.size(), stdout);
  text_.clear();
}

void JsonArrayWriter::finish() {
  writer_.end();
  text_.push_back('\n');
  flush();
}

}  // namespace taskd::cli
