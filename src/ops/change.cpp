#include "ops/change.hpp"

#include <array>
#include <fmt/format.h>

#include "core/policy.hpp"
#include "ops/chains.hpp"
#include "ops/tasks.hpp"
#include "sched/outcome.hpp"
#include "store/tasks.hpp"

namespace taskd::ops {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

// The ids of the tasks a command names: by name (every one must exist), or
// all of an owner or a group (ids only: a group may have a million tasks).
Result<std::vector<std::int64_t>> select_tasks(store::Database& db, const Selection& selection,
                                               std::string_view verb) {
  bool by_filter = !selection.owner.empty() || !selection.group.empty();
  if (by_filter == !selection.names.empty())
    return fail(ErrorKind::usage, fmt::format("{}: name the tasks, or give {}", verb,
                                              verb == "rm" ? "--owner OWNER" : "--group GROUP"));
  std::vector<std::int64_t> ids;
  if (by_filter) {
    TRY(store::for_each_task_headline(db, {.group = selection.group, .owner = selection.owner},
                                      [&](const store::StoredTask& task) -> Result<void> {
                                        ids.push_back(store::readable(task).id);
                                        return {};
                                      }));
    return ids;
  }
  for (const auto& name : selection.names) {
    auto task = TRY(find_named_stored_task(db, name, verb));
    ids.push_back(store::readable(task).id);
  }
  return ids;
}

// A malformed row is removed as any other.
Result<Outcome> remove(store::Database& db, const store::StoredTask& task, core::Time) {
  const auto& readable = store::readable(task);
  TRY(store::remove_task(db, readable.id));
  return Outcome{.task = readable.definition.name};
}

// A change made from the task's state: refused for a malformed row, whose
// state may not read (edit sets what is wrong; rm removes it).
template <Result<Outcome> (*change)(store::Database&, const core::Task&, core::Time)>
Result<Outcome> of_well_formed(store::Database& db, const store::StoredTask& task, core::Time now) {
  if (!task) return std::unexpected(store::malformed_task_error(task.error()));
  return change(db, *task, now);
}

Result<Outcome> pause(store::Database& db, const core::Task& task, core::Time now) {
  Outcome outcome{.task = task.definition.name, .done = !task.state.paused};
  if (!outcome.done) return outcome;
  auto state = task.state;
  state.paused = true;
  TRY(store::save_state(db, task.id, state, now));
  return outcome;
}

// Applies a policy transition that depends only on the schedule and now.
template <class Transition>
Result<void> transition(store::Database& db, const core::Task& task, core::Time now, Transition on_change) {
  const auto& schedule = task.schedule.value();
  auto decision = on_change(schedule, task.state, now);
  return sched::write_decision(db, task.id, decision.state, decision.skipped, now);
}

Result<Outcome> resume(store::Database& db, const core::Task& task, core::Time now) {
  Outcome outcome{.task = task.definition.name, .done = task.state.paused};
  if (outcome.done) TRY(transition(db, task, now, core::on_resume));
  return outcome;
}

Result<Outcome> enable(store::Database& db, const core::Task& task, core::Time now) {
  Outcome outcome{.task = task.definition.name, .done = task.state.disabled_until_update};
  if (!outcome.done) return outcome;
  outcome.disabled_reason = task.state.disabled_reason;
  TRY(transition(db, task, now, core::on_enable));
  return outcome;
}

// What each change is called, and does to one task.
struct ChangeKind {
  std::string_view verb;
  std::string_view done_key;  // outcomes_json's key that says whether it was done
  Result<Outcome> (*change)(store::Database&, const store::StoredTask&, core::Time);
};

const ChangeKind& kind_of(Change change) {
  static const std::array<ChangeKind, 4> kinds{{{"rm", "removed", remove},
                                                {"pause", "paused", of_well_formed<pause>},
                                                {"resume", "resumed", of_well_formed<resume>},
                                                {"enable", "enabled", of_well_formed<enable>}}};
  return kinds[static_cast<std::size_t>(change)];
}

}  // namespace

std::string_view verb_of(Change change) { return kind_of(change).verb; }

Result<std::vector<Outcome>> change_tasks(store::Database& db, const Selection& selection, Change change,
                                          const sched::Clock& clock) {
  auto verb = verb_of(change);
  auto change_task = kind_of(change).change;
  std::vector<Outcome> outcomes;
  TRY(store::write(db, [&]() -> Result<void> {
    auto ids = TRY(select_tasks(db, selection, verb));
    core::Time now = clock.now();
    for (auto id : ids) {
      auto task = TRY(store::find_stored_task(db, id));
      if (!task) continue;  // the same name given twice, removed by its first mention
      outcomes.push_back(TRY(change_task(db, *task, now)));
    }
    return change == Change::remove ? check_no_follower_left(db, verb) : Result<void>();
  }));
  return outcomes;
}

Json outcomes_json(const std::vector<Outcome>& outcomes, Change change) {
  Json out = Json::array();
  for (const auto& outcome : outcomes) {
    Json element;
    element["task"] = outcome.task;
    element[std::string(kind_of(change).done_key)] = outcome.done;
    if (change == Change::enable)
      element["disabled_reason"] = outcome.done ? Json(outcome.disabled_reason) : Json(nullptr);
    out.push_back(std::move(element));
  }
  return out;
}

Result<std::int64_t> rename_task(store::Database& db, const std::string& old_name, const std::string& new_name) {
  TRY(core::validate_task_name(new_name));
  return store::write(db, [&]() -> Result<std::int64_t> {
    auto task = TRY(find_named_stored_task(db, old_name, "rename"));
    if (TRY(store::find_stored_task(db, new_name)))
      return fail(ErrorKind::bad_input, fmt::format("rename: a task named \"{}\" already exists", new_name));
    return store::rename_task(db, store::readable(task).id, old_name, new_name);
  });
}

Json renamed_json(const std::string& old_name, const std::string& new_name, std::int64_t followers) {
  return {{"task", new_name}, {"renamed_from", old_name}, {"followers", followers}};
}

Result<Triggered> trigger_task(store::Database& db, std::string_view name, bool force, const sched::Clock& clock) {
  auto task = TRY(find_named_task(db, name, "trigger"));
  auto result = TRY(sched::trigger_run(db, task, force, clock.now()));
  return Triggered{.task = task.definition.name, .result = result};
}

Json triggered_json(const Triggered& triggered) {
  const auto& result = triggered.result;
  Json out;
  out["task"] = triggered.task;
  out["triggered"] = result.queued_run.has_value();
  out["run"] = result.queued_run ? *result.queued_run : *result.active_run;
  out["enabled"] = result.enabled;
  out["replaced"] = result.replaced;
  return out;
}

}  // namespace taskd::ops
