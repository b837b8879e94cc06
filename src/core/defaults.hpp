#pragma once
// The database's defaults (`taskd defaults`): values of a few fields that a
// task takes where it sets nothing itself. A task keeps the names of the
// fields it takes from them (TaskDefinition::from_defaults) and their
// values, which are laid on again whenever the defaults change, so every
// command and every host reads a task as it is, without the defaults.
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/task.hpp"

namespace taskd::core {

// The fields that have a default, in the order `taskd defaults` shows them:
// each the name of its option without the dashes, "_" for "-".
std::span<const std::string_view> defaultable_fields();
bool is_defaultable(std::string_view field);

// The option of a field: "--keep-runs" for keep_runs.
std::string option_of(std::string_view field);

// Each default that is set: its field and the option's text ("5m", "none").
using Defaults = std::map<std::string, std::string, std::less<>>;

// The option's text when neither the task nor the defaults give one.
std::string built_in_text(std::string_view field);

// Whether the field means something for this definition: a zone (tz) does
// only for a schedule on a wall clock (--cron, --rrule): an --every task
// without --tz counts in UTC.
bool takes_default(std::string_view field, const TaskDefinition& definition);

// Checks a default's text as `add` checks the option; the error names it.
Result<void> check_default(std::string_view field, std::string_view text);

// Lays the defaults on the fields `task` takes from them (the built-in
// value where a default is not set, except a zone: a task keeps the zone it
// has) and parses its schedule again when its zone changed. `from_defaults`
// is left in the order of defaultable_fields(), without a field that means
// nothing for the task. An error names the option and the task.
Result<void> take_defaults(Task& task, const Defaults& defaults, Time now);

// "retry,timeout" as the store keeps from_defaults, and back; an unknown
// name is an error.
std::string from_defaults_text(const std::vector<std::string>& fields);
Result<std::vector<std::string>> parse_from_defaults(std::string_view text);

}  // namespace taskd::core
