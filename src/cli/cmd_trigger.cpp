#include <fmt/format.h>
#include <memory>

#include "cli/context.hpp"
#include "cli/json.hpp"
#include "core/text.hpp"
#include "ops/change.hpp"

namespace taskd::cli {
namespace {

struct TriggerOptions {
  std::string name;
  bool force = false;
};

void print_triggered(const ops::Triggered& outcome) {
  auto name = core::printable(outcome.task);
  const auto& triggered = outcome.result;
  if (triggered.enabled) fmt::print("enabled {} (--force)\n", name);
  if (triggered.replaced) fmt::print("stopped the running run of {} (overlap=replace)\n", name);
  if (triggered.queued_run) {
    fmt::print("queued run {} of {}: it starts at the next tick\n", *triggered.queued_run, name);
  } else {
    fmt::print("not triggered: run {} of {} is already queued or running (overlap=skip)\n", *triggered.active_run,
               name);
  }
}

core::Result<void> trigger(const Context& context, const TriggerOptions& options) {
  auto db = TRY(context.open_db(store::IfMissing::use_empty));
  auto triggered = TRY(ops::trigger_task(db, options.name, options.force, context.clock));
  if (context.json) {
    print_json(ops::triggered_json(triggered));
  } else {
    print_triggered(triggered);
  }
  return {};
}

}  // namespace

void add_trigger_command(CLI::App& app, Context& context, Action& action) {
  auto options = std::make_shared<TriggerOptions>();
  auto* command = app.add_subcommand("trigger", "Queue one run of a task now; its planned slots stay as they are");
  command->add_option("name", options->name, "Task name")->required();
  command->add_flag("--force", options->force, "Enable a disabled task first, then run it");
  command->callback([&context, &action, options] { action = [&context, options] { return trigger(context, *options); }; });
}

}  // namespace taskd::cli
