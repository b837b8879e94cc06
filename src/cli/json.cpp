#include "cli/json.hpp"

#include <fmt/format.h>
#include <unistd.h>

namespace taskd::cli {

ops::JsonLayout stdout_json_layout() {
  return ::isatty(STDOUT_FILENO) == 1 ? ops::JsonLayout::indented : ops::JsonLayout::compact;
}

void print_json(const Json& document) {
  fmt::memory_buffer text;
  ops::JsonTextWriter writer(text, stdout_json_layout());
  writer.document(document);
  text.push_back('\n');
  std::fwrite(text.data(), 1, text.size(), stdout);
}

JsonArrayWriter::JsonArrayWriter(ops::JsonLayout layout) : writer_(text_, layout) { writer_.begin_array(); }

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
