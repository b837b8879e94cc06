#pragma once
// migrate: what bringing the database to this taskd's schema takes, and
// doing it (a SQLite file is backed up beside itself first).
#include "core/error.hpp"
#include "store/database.hpp"

namespace taskd::ops {

// The plan, applied unless `dry_run`; `db` opened with OlderSchema::leave.
core::Result<store::SchemaPlan> migrate(store::Database& db, bool dry_run);

}  // namespace taskd::ops
