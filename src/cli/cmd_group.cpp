#include <charconv>
#include <fmt/format.h>
#include <memory>

#include "cli/context.hpp"
#include "cli/format.hpp"
#include "cli/json.hpp"
#include "ops/groups.hpp"

namespace taskd::cli {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

struct GroupOptions {
  std::string name;
  std::string concurrency;
};

// "none" lifts the cap; otherwise a whole number of at least 1.
Result<std::optional<int>> parse_cap(const std::string& text) {
  if (text == "none") return std::optional<int>();
  int cap = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), cap);
  if (error != std::errc() || end != text.data() + text.size() || cap < 1)
    return fail(ErrorKind::bad_input,
                fmt::format("--concurrency \"{}\": expected a whole number of at least 1, or none", text));
  return std::optional<int>(cap);
}

Result<void> set_group(const Context& context, const GroupOptions& options) {
  auto name = core::validate_task_name(options.name);
  if (!name) return fail(ErrorKind::bad_input, "group set: " + name.error().message);
  auto cap = TRY(parse_cap(options.concurrency));
  auto db = TRY(context.open_db(store::IfMissing::create));
  TRY(ops::set_group_concurrency(db, *name, cap, context.clock.now()));
  fmt::print("group {}: concurrency {}\n", *name, cap_text(cap));
  return {};
}

Result<void> list_groups(const Context& context) {
  auto db = TRY(context.open_db_to_read());
  auto groups = TRY(ops::list_groups(db));
  if (context.json) {
    Json out = Json::array();
    for (const auto& group : groups) out.push_back(ops::group_json(group));
    print_json(out);
    return {};
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& group : groups) {
    rows.push_back({group.name, cap_text(group.concurrency), std::to_string(group.tasks), std::to_string(group.paused),
                    std::to_string(group.queued), std::to_string(group.running)});
  }
  print_table({"GROUP", "CONCURRENCY", "TASKS", "PAUSED", "QUEUED", "RUNNING"}, rows);
  return {};
}

}  // namespace

void add_group_command(CLI::App& app, Context& context, Action& action) {
  auto* group = app.add_subcommand("group", "Groups of tasks: their concurrency caps");
  group->require_subcommand(1);
  auto options = std::make_shared<GroupOptions>();
  auto* set = group->add_subcommand("set", "Cap how many runs of a group run at once, across all taskd processes");
  set->add_option("group", options->name, "Group name")->required();
  set->add_option("--concurrency", options->concurrency, "Runs at once: a number of at least 1, or none")->required();
  set->callback([&context, &action, options] { action = [&context, options] { return set_group(context, *options); }; });
  auto* list = group->add_subcommand("list", "List groups with their caps, tasks, and queued and running runs");
  list->callback([&context, &action] { action = [&context] { return list_groups(context); }; });
}

}  // namespace taskd::cli
