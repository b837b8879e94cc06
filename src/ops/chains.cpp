#include "ops/chains.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "store/tasks.hpp"

namespace taskd::ops {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

// Refuses when a follower in `upstream_of` is after a task in `gone`.
Result<void> check_followers_of(const core::UpstreamOf& upstream_of, const std::set<std::string, std::less<>>& gone,
                                std::string_view verb) {
  std::map<std::string, std::vector<std::string>> followers;
  for (const auto& [follower, upstream] : upstream_of) {
    if (gone.contains(upstream)) followers[upstream].push_back(follower);
  }
  if (followers.empty()) return {};
  const auto& [upstream, names] = *followers.begin();
  return fail(
      ErrorKind::bad_input,
      fmt::format("{}: {} is the upstream (--after) of {}: remove {} too, or change {} --after first", verb, upstream,
                  fmt::join(names, ", "), names.size() == 1 ? "it" : "them", names.size() == 1 ? "its" : "their"));
}

Result<bool> task_exists(store::Database& db, const TaskChange& change, std::string_view name) {
  for (const auto* definition : change.written) {
    if (definition->name == name) return true;
  }
  if (change.removed.contains(name)) return false;
  auto found = TRY(store::find_stored_task(db, name));
  return found.has_value();
}

}  // namespace

Result<void> check_chains(store::Database& db, const TaskChange& change, std::string_view label,
                          std::string_view verb) {
  bool links = std::ranges::any_of(change.written, [](const auto* d) { return !d->after.task.empty(); });
  if (!links && change.removed.empty()) return {};
  auto upstream_of = TRY(store::task_upstreams(db));
  for (const auto& name : change.removed) upstream_of.erase(name);
  for (const auto* definition : change.written) {
    upstream_of.erase(definition->name);
    if (!definition->after.task.empty()) upstream_of.emplace(definition->name, definition->after.task);
  }
  TRY(check_followers_of(upstream_of, change.removed, verb));
  for (const auto* definition : change.written) {
    const auto& upstream = definition->after.task;
    if (upstream.empty()) continue;
    auto exists = TRY(task_exists(db, change, upstream));
    if (!exists)
      return fail(ErrorKind::bad_input,
                  fmt::format("{}: no task named \"{}\" (the upstream of {})", label, upstream, definition->name));
  }
  if (auto cycle = core::find_cycle(upstream_of); !cycle.empty())
    return fail(ErrorKind::bad_input, fmt::format("{}: a cycle: {}", label, core::describe_cycle(cycle)));
  return {};
}

Result<void> check_no_follower_left(store::Database& db, std::string_view verb) {
  auto left = TRY(store::followers_of_missing_tasks(db));
  std::set<std::string, std::less<>> gone;
  for (const auto& [follower, upstream] : left) gone.insert(upstream);
  return check_followers_of(left, gone, verb);
}

}  // namespace taskd::ops
