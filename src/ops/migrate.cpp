#include "ops/migrate.hpp"

namespace taskd::ops {

core::Result<store::SchemaPlan> migrate(store::Database& db, bool dry_run) {
  auto plan = TRY(store::schema_plan(db));
  if (!dry_run && !plan.steps.empty()) TRY(store::migrate_schema(db));
  return plan;
}

}  // namespace taskd::ops
