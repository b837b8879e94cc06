#pragma once
// The database's defaults (core/defaults.hpp) as the defaults table keeps
// them: one row per field that has a default set.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/defaults.hpp"
#include "store/database.hpp"
#include "store/tasks.hpp"

namespace taskd::store {

// Every row, as it is: the caller checks the fields and their texts.
core::Result<core::Defaults> read_defaults(Database& db);

// How many tasks take the field from the defaults.
core::Result<std::int64_t> count_tasks_taking(Database& db, std::string_view field);

// The tasks that take one of `fields` from the defaults, by id.
core::Result<std::vector<StoredTask>> tasks_taking(Database& db, const std::vector<std::string>& fields);

// Sets the field's default to `text`, or (none) clears it.
core::Result<void> write_default(Database& db, std::string_view field, const std::optional<std::string>& text);

}  // namespace taskd::store
