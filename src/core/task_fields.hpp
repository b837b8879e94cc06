#pragma once
// The fields of a task definition that every front-end and both stores
// handle alike, each declared once, in SPEC.md's order: its name (the
// task-file key, the --json key, the option without its dashes), its
// column, the help of its option, the text `add` takes for it and `export`
// writes, how a task file gives it, how the store keeps it and --json
// prints it, and how `show` prints it. The CLI options, the task-file
// reader, differ and writer, --json, show and the store's columns are
// driven by this table; the code that gives a field its meaning (the claim,
// the policy, explain) reads its TaskDefinition member.
//
// The fields of a shape of their own (the name, the command, the schedule's
// fields, retry, permanent_exit, env, cwd, after) are not in it: each
// front-end handles them in its place.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "core/stored_cell.hpp"
#include "core/task.hpp"

namespace taskd::core {

// A field's value as the store keeps it and --json prints it: none (NULL,
// null), a whole number, text, or a flag (stored as 0 or 1).
using FieldValue = std::variant<std::monostate, std::int64_t, std::string, bool>;

// How a task file gives a field's value: a string; a whole number; a limit,
// a whole number or a string as the option takes it ("512M", "max"), which
// `export` writes as a string or as a number; or true or false, which the
// command line gives as an option without a value (and --no-… for false);
// or an array of strings, which the option's text gives comma-separated.
enum class FileForm { text, whole_number, limit_as_text, limit_as_number, flag, text_list };

// Where `show` prints a field: on its own line, always or unless the field
// has its initial value (a line shared by the fields after it with the same
// label), or apart (show prints it in a way of its own, or not at all).
enum class Shown { always, unless_initial, apart };

struct TaskField {
  std::string_view name;     // "kill_grace"
  std::string_view column;   // of the tasks table
  std::string_view help;     // of the option
  std::string_view initial;  // the option's text when it is not given
  FileForm file_form;
  Shown shown;
  std::string_view label;  // show's line
  // The option's text, checked, set into `definition`, whose schedule is
  // `schedule`; an error names the option.
  Result<void> (*parse)(const TaskField& field, std::string_view text, TaskDefinition& definition,
                        const Schedule& schedule, Time now);
  // The option's text that parse reads back to the same value.
  std::string (*text)(const TaskDefinition& definition);
  bool (*same)(const TaskDefinition& a, const TaskDefinition& b);
  // As the store binds it and --json prints it.
  FieldValue (*value)(const TaskDefinition& definition);
  // The stored column read into `definition`; the error says what is wrong.
  Result<void> (*read)(const StoredCell& cell, TaskDefinition& definition);
  // show's line for this field and those after it with its label, when it
  // is not `text`.
  std::string (*show)(const TaskDefinition& definition) = nullptr;

  // "--kill-grace".
  std::string flag() const;
  Result<void> set(std::string_view option_text, TaskDefinition& definition, const Schedule& schedule,
                  Time now) const {
    return parse(*this, option_text, definition, schedule, now);
  }
  std::string shown_text(const TaskDefinition& definition) const { return show ? show(definition) : text(definition); }
};

std::span<const TaskField> task_fields();

// The field of that column of the tasks table; none for a column not in the table.
const TaskField* task_field_of_column(std::string_view column);

}  // namespace taskd::core
