#include "ops/explain.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "store/calendars.hpp"
#include "store/runs.hpp"
#include "store/tasks.hpp"
#include "store/workers.hpp"

namespace taskd::ops {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

core::PastRun past_run_of(const store::RunRecord& run) {
  return {run.id,         run.status,      run.trigger,     run.scheduled_at, run.enqueued_at, run.not_before,
          run.started_at, run.finished_at, run.deadline_at, run.attempt_no,   run.reason,      run.upstream_run_id};
}

// The runs whose slots the filter selects, oldest first.
Result<std::vector<core::PastRun>> past_runs(store::Database& db, const store::RunFilter& filter) {
  std::vector<core::PastRun> runs;
  TRY(store::for_each_run(db, filter, [&](const store::RunRecord& run) -> Result<void> {
    runs.push_back(past_run_of(run));
    return {};
  }));
  std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return runs;
}

Result<core::SlotHistory> slot_history(store::Database& db, const core::Task& task, const core::Schedule& schedule,
                                       core::Time slot) {
  core::SlotHistory history;
  auto next = core::next_slot_after(schedule, slot);
  store::RunFilter around{.task_id = task.id, .since = slot, .until = next ? *next + core::Millis{1} : core::Time::max()};
  history.runs = TRY(past_runs(db, around));
  store::RunFilter planned{
      .task_id = task.id, .trigger = core::Trigger::schedule, .until = slot + core::Millis{1}, .limit = 1};
  auto before = TRY(past_runs(db, planned));
  if (!before.empty()) history.newest_planned_before = before.front();
  history.oldest_kept_slot = TRY(store::oldest_run_slot(db, task.id));
  auto created = store::task_created_at(db, task.id);
  if (!created)
    return core::fail(created.error().kind, fmt::format("explain: task \"{}\": {}", task.definition.name,
                                                        created.error().message));
  history.created_at = *created;
  return history;
}

// The latest run queued for a time at or before `at`.
Result<std::optional<core::PastRun>> latest_run_by(store::Database& db, const core::Task& task, core::Time at) {
  store::RunFilter filter{.task_id = task.id, .until = at + core::Millis{1}, .limit = 1};
  auto runs = TRY(past_runs(db, filter));
  if (runs.empty()) return std::optional<core::PastRun>();
  return std::optional<core::PastRun>(runs.front());
}

Result<std::vector<core::SchedulerSeen>> schedulers_seen(store::Database& db) {
  auto workers = TRY(store::list_workers(db));
  std::vector<core::SchedulerSeen> seen;
  for (const auto& worker : workers) {
    if (worker.role == "run") seen.push_back({worker.identity.host, worker.started_at, worker.heartbeat_at});
  }
  auto ticks = TRY(store::list_ticks(db));
  for (const auto& tick : ticks) seen.push_back({tick.host, tick.last_at, tick.last_at, true, tick.every});
  return seen;
}


// The facts not already told: the slot's story and the next run may both
// say whether a scheduler is running.
void append_new_facts(std::vector<core::Fact>& facts, std::vector<core::Fact> more) {
  for (auto& fact : more) {
    bool told = std::any_of(facts.begin(), facts.end(), [&](const auto& f) { return f.text == fact.text; });
    if (!told) facts.push_back(std::move(fact));
  }
}

// The tasks --after this one, with how they follow it.
Result<std::vector<std::pair<std::string, core::Upstream>>> followers(store::Database& db, const core::Task& task) {
  auto tasks = TRY(store::followers_of(db, task.definition.name));
  std::vector<std::pair<std::string, core::Upstream>> out;
  for (const auto& stored : tasks) {
    const auto& follower = store::readable(stored);
    out.emplace_back(follower.definition.name, follower.definition.after);
  }
  return out;
}

// The SKIPPED run the scheduler wrote for a day --skip-calendar removed.
Result<std::optional<std::int64_t>> skipped_row_of_day(store::Database& db, const core::Task& task,
                                                       date::local_days day) {
  auto [begin, end] = core::day_span(TRY(core::set_dates_zone(task.definition)), day);
  store::RunFilter filter{
      .task_id = task.id, .statuses = {core::RunStatus::skipped}, .since = begin, .until = end, .limit = 1};
  auto runs = TRY(past_runs(db, filter));
  if (runs.empty()) return std::optional<std::int64_t>();
  return std::optional(runs.front().id);
}

// Why the task's calendars removed the slot asked about: "2026-12-25 is
// Christmas Day in de-holidays".
Result<std::optional<core::Fact>> removed_by_calendar(store::Database& db, const core::Task& task,
                                                      const Explanation& out, const core::TimeStyle& style) {
  if (out.asked_now) return std::nullopt;
  const auto& d = task.definition;
  auto day = core::CalendarDayFinder(d).removing(out.asked);
  if (!day) return std::nullopt;
  const auto date_text = date::format("%F", *day);
  const auto asked = core::show_time(out.asked, style);
  for (const auto& name : d.skip_calendar) {
    auto dates = TRY(store::read_calendar(db, name)).value_or(std::vector<core::CalendarDate>{});
    auto found = std::ranges::find(dates, *day, &core::CalendarDate::day);
    if (found == dates.end()) continue;
    auto row = TRY(skipped_row_of_day(db, task, *day));
    core::Fact fact{"calendar",
                    fmt::format("{} is skipped: {} (--skip-calendar). {}", asked,
                                core::skipped_date_words(*found, name),
                                row ? fmt::format("Run {} records the day in the history.", *row)
                                    : "Its SKIPPED run is written when the task's next slot is served."),
                    {{"calendar", name}, {"date", date_text}, {"date_name", found->name}}};
    if (row) fact.data.emplace_back("run_id", *row);
    return fact;
  }
  if (d.only_calendar.empty()) return std::nullopt;
  return core::Fact{
      "calendar",
      fmt::format("{} is skipped: {} is not a day of {} (--only-calendar).", asked, date_text, d.only_calendar),
      {{"calendar", d.only_calendar}, {"date", date_text}, {"date_name", std::string()}}};
}

// The question's own facts: the schedule, the chain, and the slot it is
// about (and the calendar day that removed it).
void explain_question(Explanation& out, const core::Task& task, const core::Schedule& schedule,
                      const std::vector<std::pair<std::string, core::Upstream>>& chained,
                      std::optional<core::Fact> calendar, core::Time now, const core::TimeStyle& style) {
  auto schedule_text = core::describe_schedule(task.definition);
  out.facts.push_back({"schedule", fmt::format("{} runs on the schedule: {}.", task.definition.name, schedule_text),
                       {{"schedule", schedule_text}}});
  append_new_facts(out.facts, core::explain_chain(task.definition, chained));
  if (auto exdate = core::excluding_exdate(task.definition, out.asked); exdate && !out.asked_now)
    out.facts.push_back(
        {"excluded",
         fmt::format("{} is excluded by --exdate {}.", core::show_time(out.asked, style), core::to_string(*exdate)),
         {{"exdate", core::to_string(*exdate)}}});
  if (calendar) out.facts.push_back(std::move(*calendar));
  if (!out.slot) {
    if (core::has_slot_grid(schedule))
      out.facts.push_back({"no_slot", fmt::format("The schedule has no slot {} {}.", out.asked <= now ? "at or before" : "after",
                                                  core::show_time(out.asked, style)),
                           {}});
    return;
  }
  auto slot = core::show_time(*out.slot, style);
  auto text = out.asked_now              ? fmt::format("The latest planned slot is {}.", slot)
              : *out.slot == out.asked ? fmt::format("{} is a planned slot.", slot)
                                       : fmt::format("{} is no planned slot; the slot in question is {}.",
                                                     core::show_time(out.asked, style), slot);
  out.facts.push_back({"slot", std::move(text), {{"slot", *out.slot}}});
  if (auto dst = core::explain_dst(schedule, *out.slot)) out.facts.push_back(std::move(*dst));
}

Json fact_value_json(const core::FactValue& value) {
  return std::visit(
      [](const auto& v) -> Json {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, core::Time>) {
          return core::format_rfc3339(v);
        } else if constexpr (std::is_same_v<V, core::Millis>) {
          return seconds_json(v);
        } else {
          return v;
        }
      },
      value);
}

// "03:00" or "03:00:00": that wall time today, or yesterday while today's is
// still to come; or a whole wall time (2026-11-24T03:00:00).
std::optional<core::LocalTime> wall_time(std::string_view text, core::Zone zone, core::Time now) {
  auto local_now = core::to_local(zone, now);
  bool time_of_day = text.size() == 5 || text.size() == 8;
  if (!time_of_day) {
    auto local = core::parse_local(text);
    return local ? std::optional(*local) : std::nullopt;
  }
  auto today = core::format_local(local_now).substr(0, 10);
  auto local = core::parse_local(fmt::format("{}T{}{}", today, text, text.size() == 5 ? ":00" : ""));
  if (!local) return std::nullopt;
  return *local > local_now ? *local - std::chrono::days{1} : *local;
}

}  // namespace

Result<std::optional<core::Time>> time_asked(std::string_view text, std::string_view option,
                                             const core::TaskDefinition& definition, core::Time now) {
  if (text.empty()) return std::optional<core::Time>();
  auto zone = TRY(core::find_zone(definition.tz));
  if (auto local = wall_time(text, zone, now)) return std::optional(core::resolve_local(zone, *local).first);
  if (auto ago = core::parse_duration(text)) return std::optional(now - *ago);
  if (auto parsed = core::parse_rfc3339(text)) return std::optional(*parsed);
  return fail(ErrorKind::bad_input, fmt::format("{}: \"{}\" is neither a wall time in {} (03:00, 2026-11-24T03:00:00), "
                                                "an RFC 3339 time nor a duration ago (2h)",
                                                option, text, definition.tz.empty() ? "UTC" : definition.tz));
}


Result<Explanation> explain_task(store::Database& db, const core::Task& task, std::optional<core::Time> at,
                                 core::Time now, const core::TimeStyle& style) {
  core::Time asked = at.value_or(now);
  const auto& schedule = task.schedule.value();
  auto schedulers = TRY(schedulers_seen(db));
  auto chained = TRY(followers(db, task));
  Explanation out{asked, !at, core::slot_in_question(schedule, asked, now), {}};
  auto calendar = TRY(removed_by_calendar(db, task, out, style));
  explain_question(out, task, schedule, chained, std::move(calendar), now, style);
  std::vector<core::Fact> story;
  if (out.slot) {
    auto history = TRY(slot_history(db, task, schedule, *out.slot));
    story = core::explain_slot(task, schedule, *out.slot, history, schedulers, now, style);
  } else if (!core::has_slot_grid(schedule)) {
    auto run = TRY(latest_run_by(db, task, asked));
    story = core::explain_run_at(task, schedule, run, schedulers, now, style);
  }
  append_new_facts(out.facts, std::move(story));
  append_new_facts(out.facts, core::explain_next(task, schedule, schedulers, now, style));
  return out;
}

Json explanation_json(const core::Task& task, const Explanation& explanation, core::Time now) {
  Json facts = Json::array();
  for (const auto& fact : explanation.facts) {
    Json entry = {{"kind", fact.kind}, {"text", fact.text}};
    for (const auto& [key, value] : fact.data) entry[key] = fact_value_json(value);
    facts.push_back(std::move(entry));
  }
  return {{"task", task.definition.name},
          {"now", core::format_rfc3339(now)},
          {"at", core::format_rfc3339(explanation.asked)},
          {"slot", time_json(explanation.slot)},
          {"facts", std::move(facts)}};
}

}  // namespace taskd::ops
