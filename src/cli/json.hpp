#pragma once
// Printing JSON: the shapes are the operations' (ops/json.hpp).
#include "ops/json.hpp"

namespace taskd::cli {

using ops::Json;
using ops::run_json;
using ops::seconds_json;
using ops::stored_task_json;
using ops::task_json;
using ops::time_json;

// Prints a JSON document and a newline; a byte of a string that is not
// UTF-8 is printed as U+FFFD.
void print_json(const Json& document);

// Prints a JSON array element by element, as print_json would print the
// whole array, so that a listing of a million tasks never holds them all.
class JsonArrayWriter {
 public:
  void add(const Json& element);
  // Closes the array ("[]" when nothing was added).
  void finish();

 private:
  bool open_ = false;
};

// Prints as one JSON array, element by element, what `walk` visits:
// walk(visit) calls visit(item) for each item, which `to_json` turns into
// an element. An error of the walk is returned, the array left unfinished.
template <class Walk, class ToJson>
core::Result<void> print_json_array(Walk walk, ToJson to_json) {
  JsonArrayWriter out;
  TRY(walk([&](const auto& item) -> core::Result<void> {
    out.add(to_json(item));
    return {};
  }));
  out.finish();
  return {};
}

}  // namespace taskd::cli
