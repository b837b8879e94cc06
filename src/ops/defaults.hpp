#pragma once
// taskd defaults: the database's defaults (core/defaults.hpp), shown and
// changed; a change is laid on every task that takes the field from them,
// in the same transaction.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/time.hpp"
#include "ops/json.hpp"
#include "store/database.hpp"

namespace taskd::ops {

struct DefaultEntry {
  std::string field;
  std::optional<std::string> value;  // none: not set
  std::string problem;               // a stored value that does not parse (another client wrote it)
  std::int64_t tasks = 0;            // that take the field from the defaults
};

// Every field that has a default, in core::defaultable_fields()'s order.
core::Result<std::vector<DefaultEntry>> show_defaults(store::Database& db);

// Each field given: its new text, or none to clear it.
using DefaultsChange = std::map<std::string, std::optional<std::string>>;

// Checks every text, then in one transaction writes them and lays them on
// the tasks that take their fields from the defaults (a task's schedule is
// planned anew when its zone changes). Returns how many tasks changed. A
// text that does not fit a task (the error names it) writes nothing.
core::Result<std::int64_t> change_defaults(store::Database& db, const DefaultsChange& change, core::Time now);

Json defaults_json(const std::vector<DefaultEntry>& entries);

}  // namespace taskd::ops
