// `taskd migrate [--dry-run]`: brings the database's schema to this taskd's,
// naming each step. The commands that only read never migrate; those that
// write still do, as they always have.
#include <fmt/format.h>
#include <memory>

#include "cli/context.hpp"
#include "core/text.hpp"
#include "ops/migrate.hpp"

namespace taskd::cli {
namespace {

using core::Result;

void print_plan(const store::Database& db, const store::SchemaPlan& plan, bool dry_run) {
  auto name = core::printable(db.name());
  if (plan.steps.empty()) {
    fmt::print("{} has schema version {}, this taskd's: nothing to migrate\n", name, plan.version);
    return;
  }
  fmt::print("{} has schema version {}; this taskd's is {}\n", name, plan.version, plan.current);
  if (plan.backup)
    fmt::print("{} {}\n", dry_run ? "would back it up to" : "backed it up to", core::printable(plan.backup->string()));
  fmt::print("{}\n", dry_run ? "would apply:" : "applied:");
  for (const auto& step : plan.steps) fmt::print("  {:>3}  {}\n", step.version, step.what);
}

Result<void> migrate(const Context& context, bool dry_run) {
  auto db = TRY(context.open_existing_db(store::OlderSchema::leave));
  auto plan = TRY(ops::migrate(db, dry_run));
  print_plan(db, plan, dry_run);
  return {};
}

}  // namespace

void add_migrate_command(CLI::App& app, Context& context, Action& action) {
  auto* command = app.add_subcommand(
      "migrate", "Bring the database to this taskd's schema (a SQLite file is backed up beside itself first)");
  auto dry_run = std::make_shared<bool>(false);
  command->add_flag("--dry-run", *dry_run, "Say what would be done; write nothing");
  command->callback(
      [&context, &action, dry_run] { action = [&context, dry_run] { return migrate(context, *dry_run); }; });
}

}  // namespace taskd::cli
