#pragma once
// Printing JSON: the shapes are the operations' (ops/json.hpp).
#include "ops/json.hpp"

namespace taskd::cli {

using ops::Json;
using ops::task_json;
using ops::write_run;
using ops::write_stored_task;

// How --json prints: indented for a terminal, compact for a pipe or a file
// (see --json in taskd(1)).
ops::JsonLayout stdout_json_layout();

// Prints a JSON document and a newline in stdout's layout; a byte of a
// string that is not UTF-8 is printed as U+FFFD.
void print_json(const Json& document);

// Prints a JSON array element by element, as print_json would print the
// whole array, so that a listing of a million tasks never holds them all;
// what is written before an error stays printed, the array unfinished.
class JsonArrayWriter {
 public:
  explicit JsonArrayWriter(ops::JsonLayout layout = stdout_json_layout());
  ~JsonArrayWriter();
  JsonArrayWriter(const JsonArrayWriter&) = delete;
  JsonArrayWriter& operator=(const JsonArrayWriter&) = delete;

  void add(const Json& element);
  // An element written by `write(sink)`, without a document.
  template <class Write>
  void add_written(Write write) {
    write(static_cast<ops::JsonSink&>(writer_));
    added();
  }
  // Closes the array ("[]" when nothing was added).
  void finish();

 private:
  void added();
  void flush();

  fmt::memory_buffer text_;
  ops::JsonTextWriter writer_;
  bool any_ = false;
};

// Prints as one JSON array, element by element, what `walk` visits:
// walk(visit) calls visit(item) for each item, which write(sink, item)
// writes as an element. An error of the walk is returned, the array left
// unfinished.
template <class Walk, class Write>
core::Result<void> print_json_array(Walk walk, Write write) {
  JsonArrayWriter out;
  TRY(walk([&](const auto& item) -> core::Result<void> {
    out.add_written([&](ops::JsonSink& sink) { write(sink, item); });
    return {};
  }));
  out.finish();
  return {};
}

}  // namespace taskd::cli
