#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <memory>

#include "cli/context.hpp"
#include "cli/format.hpp"
#include "cli/json.hpp"
#include "core/defaults.hpp"
#include "core/text.hpp"
#include "ops/defaults.hpp"

namespace taskd::cli {
namespace {

using core::Result;

struct DefaultsOptions {
  std::map<std::string, std::string, std::less<>> values;  // of each field whose option is given
  std::vector<std::string> clear;                          // --clear FIELD,…
};

// What a task that takes the field from the defaults has while none is set.
std::string built_in_words(std::string_view field) {
  auto text = core::built_in_text(field);
  if (!text.empty()) return text;
  if (field == "timeout") return "half the interval";
  if (field == "tz") return "the zone it had, else the system's";
  return "none";
}

std::string value_cell(const ops::DefaultEntry& entry) {
  if (!entry.problem.empty()) return fmt::format("malformed: {}", entry.problem);
  if (entry.value) return *entry.value;
  return fmt::format("not set ({})", built_in_words(entry.field));
}

void print_defaults(const std::vector<ops::DefaultEntry>& entries) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& entry : entries) {
    rows.push_back({core::option_of(entry.field), core::printable(value_cell(entry)), std::to_string(entry.tasks)});
  }
  print_table({"DEFAULT", "VALUE", "TASKS TAKING IT"}, rows);
}

Result<ops::DefaultsChange> change_of(const DefaultsOptions& options) {
  ops::DefaultsChange change;
  for (const auto& [field, text] : options.values) change.emplace(field, text);
  for (const auto& item : options.clear) {
    for (auto& field : core::list_items(item)) {
      std::ranges::replace(field, '-', '_');
      if (field.starts_with("__")) field.erase(0, 2);
      if (change.contains(field))
        return core::fail(core::ErrorKind::usage,
                          fmt::format("defaults: {} is both set and cleared", core::option_of(field)));
      change.emplace(field, std::nullopt);
    }
  }
  return change;
}

Result<void> defaults(const Context& context, const DefaultsOptions& options) {
  auto change = TRY(change_of(options));
  if (change.empty()) {
    auto db = TRY(context.open_db_to_read());
    auto entries = TRY(ops::show_defaults(db));
    if (context.json) {
      print_json({{"defaults", ops::defaults_json(entries)}});
    } else {
      print_defaults(entries);
    }
    return {};
  }
  auto db = TRY(context.open_db(store::IfMissing::create));
  auto changed = TRY(ops::change_defaults(db, change, context.clock.now()));
  auto entries = TRY(ops::show_defaults(db));
  if (context.json) {
    print_json({{"defaults", ops::defaults_json(entries)}, {"tasks_changed", changed}});
    return {};
  }
  for (const auto& [field, text] : change) {
    if (text) {
      fmt::print("default {} set to {}\n", core::option_of(field), core::printable(*text));
    } else {
      fmt::print("default {} cleared\n", core::option_of(field));
    }
  }
  fmt::print("{} task{} changed\n", changed, changed == 1 ? "" : "s");
  return {};
}

}  // namespace

void add_defaults_command(CLI::App& app, Context& context, Action& action) {
  auto options = std::make_shared<DefaultsOptions>();
  auto* command = app.add_subcommand(
      "defaults", "Show or set the database's defaults: values a task takes where it sets none itself");
  for (auto field : core::defaultable_fields()) {
    command->add_option_function<std::string>(
        core::option_of(field), [options, field](const std::string& text) { options->values[std::string(field)] = text; },
        fmt::format("The default of {} (see taskd add)", core::option_of(field)));
  }
  command->add_option("--clear", options->clear, "Clear these defaults: FIELD[,FIELD…], e.g. timeout,retry");
  command->callback([&context, &action, options] { action = [&context, options] { return defaults(context, *options); }; });
}

}  // namespace taskd::cli
