#include "core/explain.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "core/backfill.hpp"
#include "core/health.hpp"
#include "core/policy.hpp"

namespace taskd::core {
namespace {

using namespace std::chrono_literals;

// Lateness below this is a scheduler's own step, not worth a sentence.
constexpr Millis noticeable = 1s;

std::string at(const TimeStyle& style, Time t) { return show_time(t, style); }
std::string took(Millis d) { return format_duration_ms(d); }
// How far a time lies from now, to the second.
std::string away(Millis d) { return format_duration(std::chrono::floor<Seconds>(d)); }
FactValue number(std::int64_t n) { return n; }

// Who was there to tick at `due`: a `taskd run` registered now that had
// started by then. A scheduler that stopped since has left no row.
Fact scheduler_then(const std::vector<SchedulerSeen>& schedulers, Time due, const TimeStyle& style) {
  for (const auto& scheduler : schedulers) {
    if (!scheduler.run_once && scheduler.started_at <= due)
      return {"scheduler",
              fmt::format("taskd run on {} was running then (since {}).", scheduler.host, at(style, scheduler.started_at)),
              {{"scheduler_running", true}, {"host", scheduler.host}, {"since", scheduler.started_at}}};
  }
  return {"scheduler",
          "No taskd run registered now was running then: run-once ticks only when it is called, and a scheduler "
          "that has stopped since leaves no trace.",
          {{"scheduler_running", false}}};
}

// Whether a scheduler is there to tick now, from the heartbeats and run-once's ticks.
Fact scheduler_now(const std::vector<SchedulerSeen>& schedulers, Time now, const TimeStyle& style) {
  auto newest = std::max_element(schedulers.begin(), schedulers.end(),
                                 [](const auto& a, const auto& b) { return a.heartbeat_at < b.heartbeat_at; });
  if (newest == schedulers.end())
    return {"scheduler", "No taskd run is registered on this database: start taskd run, or call taskd run-once from cron.",
            {{"scheduler_running", false}}};
  if (newest->run_once) {
    bool ticking = now - newest->heartbeat_at <= tick_silence(newest->every);
    return {"scheduler",
            fmt::format("taskd run-once on {} last ticked at {} ({}){}", newest->host, at(style, newest->heartbeat_at),
                        cadence_text(newest->every),
                        ticking ? "." : ", and has not since: call it from cron again, or start taskd run."),
            {{"scheduler_running", ticking}, {"host", newest->host}, {"ticked_at", newest->heartbeat_at}}};
  }
  return {"scheduler", fmt::format("taskd run on {} last heartbeated at {}.", newest->host, at(style, newest->heartbeat_at)),
          {{"scheduler_running", true}, {"host", newest->host}, {"heartbeat_at", newest->heartbeat_at}}};
}

// The rung of the ladder that follows attempt `attempt_no`, if there is one.
std::optional<Seconds> rung_after(const TaskDefinition& definition, int attempt_no) {
  if (attempt_no < 1 || attempt_no > static_cast<int>(definition.retry.size())) return std::nullopt;
  return definition.retry[static_cast<std::size_t>(attempt_no - 1)];
}

void explain_origin(std::vector<Fact>& facts, const TaskDefinition& definition, const PastRun& run,
                    const std::vector<SchedulerSeen>& schedulers, const TimeStyle& style) {
  Millis tick_delay = run.enqueued_at - run.scheduled_at;
  std::string text = fmt::format("Run {} was queued for slot {} at {}", run.id, at(style, run.scheduled_at), at(style, run.enqueued_at));
  if (tick_delay > noticeable) text += fmt::format(", {} after the slot: no tick came sooner", took(tick_delay));
  facts.push_back({"queued", text + ".",
                   {{"run_id", run.id}, {"slot", run.scheduled_at}, {"enqueued_at", run.enqueued_at}, {"queued_after", tick_delay}}});
  if (tick_delay > noticeable && !run.started_at) facts.push_back(scheduler_then(schedulers, run.scheduled_at, style));
  Millis jitter = run.not_before - run.scheduled_at;
  if (jitter > Millis{0})
    facts.push_back({"jitter",
                     fmt::format("Its jitter was {} (--jitter {}, fixed by the task's name and run index), so it was "
                                 "due at {}.",
                                 took(jitter), format_duration(definition.jitter), at(style, run.not_before)),
                     {{"jitter", jitter}, {"due_at", run.not_before}}});
}

// A retry: which rung of the ladder, and whether the ladder yielded to the plan.
Fact explain_retry(const TaskDefinition& definition, const Schedule& schedule, const PastRun& run,
                   const PastRun* previous, const TimeStyle& style) {
  // A retry not started yet has no attempt number of its own.
  int attempt = run.attempt_no > 0 ? run.attempt_no : previous ? previous->attempt_no + 1 : 0;
  int rung = attempt - 1;
  auto delay = rung_after(definition, rung);
  std::vector<std::pair<std::string, FactValue>> data{
      {"run_id", run.id}, {"attempt_no", number(attempt)}, {"rung", number(rung)}, {"at", run.scheduled_at}};
  if (delay) data.emplace_back("retry_delay", Millis{*delay});
  if (!delay || !previous || !previous->finished_at)
    return {"retry", fmt::format("Run {} is a retry, of rung {} of the ladder.", run.id, rung), std::move(data)};
  Time ladder_time = *previous->finished_at + *delay;
  if (std::chrono::abs(run.scheduled_at - ladder_time) < noticeable || !is_planned_slot(schedule, run.scheduled_at))
    return {"retry",
            fmt::format("Run {} retried it as attempt {} at {}: rung {} of the ladder ({}) after attempt {} ended at {}.",
                        run.id, attempt, at(style, run.scheduled_at), rung, format_duration(*delay), rung,
                        at(style, *previous->finished_at)),
            std::move(data)};
  data.emplace_back("ladder_at", ladder_time);
  auto timebox = effective_timeout(definition, schedule, ladder_time);
  auto why = ladder_time >= run.scheduled_at ? std::string("at or after that slot")
             : timebox ? fmt::format("and run past that slot within its timebox of {}", format_duration(*timebox))
                       : std::string("and run past that slot");
  return {"yielded",
          fmt::format("Run {} retried it as attempt {} at the planned slot {}: rung {} of the ladder ({}) would have "
                      "started at {} {}, so the ladder yielded to the plan.",
                      run.id, attempt, at(style, run.scheduled_at), rung, format_duration(*delay), at(style, ladder_time), why),
          std::move(data)};
}

std::string_view outcome_words(RunStatus status) {
  switch (status) {
    case RunStatus::succeeded: return "succeeded";
    case RunStatus::failed: return "failed";
    case RunStatus::timed_out: return "timed out";
    case RunStatus::lost: return "was lost";
    default: return to_string(status);
  }
}

// When a run was due to start: its slot and jitter, or (triggered, backfilled)
// when it was queued.
Time due_of(const PastRun& run) {
  return run.trigger == Trigger::manual ? std::max(run.enqueued_at, run.not_before) : run.not_before;
}

void explain_lateness(std::vector<Fact>& facts, const PastRun& run, const std::vector<SchedulerSeen>& schedulers,
                      const TimeStyle& style) {
  Time due = due_of(run);
  Millis late = *run.started_at - due;
  if (late <= noticeable) return;
  Millis queued_after = std::max(Millis{0}, run.enqueued_at - due);
  Millis waited = *run.started_at - std::max(due, run.enqueued_at);
  std::vector<std::string> parts;
  if (queued_after > noticeable) parts.push_back(fmt::format("the tick queued it {} after it was due", took(queued_after)));
  if (waited > noticeable)
    parts.push_back(fmt::format("it waited {} in the queue for a worker (the task paused, a run of it still running, "
                                "its group full, or no worker)",
                                took(waited)));
  facts.push_back({"late", fmt::format("It started {} late: {}.", took(late), fmt::join(parts, "; ")),
                   {{"run_id", run.id}, {"late_by", late}, {"queued_after", queued_after}, {"waited_in_queue", waited}}});
  facts.push_back(scheduler_then(schedulers, due, style));
}

void explain_outcome(std::vector<Fact>& facts, const PastRun& run, const std::vector<SchedulerSeen>& schedulers,
                     Time now, const TimeStyle& style) {
  std::vector<std::pair<std::string, FactValue>> data{{"run_id", run.id}, {"status", std::string(to_string(run.status))}};
  if (!run.reason.empty()) data.emplace_back("reason", run.reason);
  switch (run.status) {
    case RunStatus::queued: {
      Time due = due_of(run);
      auto text = due > now ? fmt::format("It waits for its start at {}.", at(style, due))
                            : fmt::format("It has waited in the queue since {} ({}): a worker starts it once the task "
                                          "is not paused, no run of it is running and its group has room.",
                                          at(style, due), away(now - due));
      facts.push_back({"queued", std::move(text), std::move(data)});
      if (due <= now) facts.push_back(scheduler_now(schedulers, now, style));
      return;
    }
    case RunStatus::skipped:
      facts.push_back({"skipped", fmt::format("Run {} records it as skipped: {}.", run.id, run.reason), std::move(data)});
      return;
    case RunStatus::dropped:
      facts.push_back({"dropped", fmt::format("Run {} was not started, by the drop rule: {}.", run.id, run.reason),
                       std::move(data)});
      return;
    default: break;
  }
  if (!run.started_at) return;
  std::string text = fmt::format("Attempt {} started at {}", run.attempt_no, at(style, *run.started_at));
  data.emplace_back("attempt_no", number(run.attempt_no));
  data.emplace_back("started_at", *run.started_at);
  if (run.status == RunStatus::running) {
    text += run.deadline_at ? fmt::format(" and is running; its timebox ends at {}.", at(style, *run.deadline_at)) : " and is running.";
  } else if (run.finished_at) {
    Millis duration = *run.finished_at - *run.started_at;
    data.emplace_back("finished_at", *run.finished_at);
    data.emplace_back("duration", duration);
    text += fmt::format(" and {} after {}", outcome_words(run.status), took(duration));
    text += run.reason.empty() || run.status == RunStatus::succeeded ? "." : fmt::format(": {}.", run.reason);
  }
  facts.push_back({std::string(to_string(run.status)), std::move(text), std::move(data)});
  explain_lateness(facts, run, schedulers, style);
}

// A manual run: triggered, backfilled, or queued by its upstream; and a
// retry of one of the last two by the ladder.
Fact explain_manual_origin(const TaskDefinition& definition, const PastRun& run, const TimeStyle& style) {
  std::vector<std::pair<std::string, FactValue>> data{
      {"run_id", run.id}, {"slot", run.scheduled_at}, {"enqueued_at", run.enqueued_at}};
  std::string retry;
  if (run.attempt_no > 1) {
    retry = fmt::format(" It is attempt {}, a retry by the ladder (rung {}).", run.attempt_no, run.attempt_no - 1);
    data.emplace_back("attempt_no", number(run.attempt_no));
  }
  if (run.upstream_run_id) {
    data.emplace_back("upstream_run_id", *run.upstream_run_id);
    return {"chained",
            fmt::format("Run {} was queued at {} by run {} of {} (--after {}).{}", run.id, at(style, run.enqueued_at),
                        *run.upstream_run_id, definition.after.task, to_string(definition.after), retry),
            std::move(data)};
  }
  if (is_backfill(run.trigger, run.scheduled_at, run.enqueued_at, false))
    return {"backfilled",
            fmt::format("Run {} is a backfilled run of slot {}, queued at {} by taskd backfill.{}", run.id,
                        at(style, run.scheduled_at), at(style, run.enqueued_at), retry),
            std::move(data)};
  return {"triggered", fmt::format("Run {} was triggered at {}.", run.id, at(style, run.enqueued_at)), std::move(data)};
}

void explain_attempt(std::vector<Fact>& facts, const TaskDefinition& definition, const Schedule& schedule,
                     const PastRun& run, const PastRun* previous, const std::vector<SchedulerSeen>& schedulers,
                     Time now, const TimeStyle& style) {
  switch (run.trigger) {
    case Trigger::schedule: explain_origin(facts, definition, run, schedulers, style); break;
    case Trigger::retry: facts.push_back(explain_retry(definition, schedule, run, previous, style)); break;
    case Trigger::manual: facts.push_back(explain_manual_origin(definition, run, style)); break;
  }
  explain_outcome(facts, run, schedulers, now, style);
}

bool is_failure(RunStatus status) {
  return status == RunStatus::failed || status == RunStatus::timed_out || status == RunStatus::lost;
}

// After the slot's last attempt: a failure with no rung left disabled the
// task (--disable-when-exhausted), or its plan went on.
void explain_end_of_ladder(std::vector<Fact>& facts, const Task& task, const PastRun& last) {
  if (!is_failure(last.status) || last.trigger == Trigger::manual) return;
  if (rung_after(task.definition, last.attempt_no)) return;
  auto then = task.definition.disable_when_exhausted
                  ? "the task was disabled until it is enabled or edited (--disable-when-exhausted)"
                  : "the task kept its plan: its next planned slot runs, with the ladder from its first rung";
  facts.push_back({"ladder_exhausted",
                   fmt::format("No rung of the ladder was left after attempt {} ({} retries): {}.", last.attempt_no,
                               task.definition.retry.size(), then),
                   {{"attempt_no", number(last.attempt_no)}}});
}

// The SKIPPED row of a day --skip-calendar removed, between two planned
// slots: no part of the story of the one before it.
bool tells_a_skipped_day(const CalendarDayFinder& calendar_days, const PastRun& run) {
  return run.status == RunStatus::skipped && calendar_days.removing(run.scheduled_at);
}

// The runs that tell the slot's story: its attempts and retries, and a retry
// that took the next planned slot.
std::vector<const PastRun*> story_of(const TaskDefinition& definition, const std::vector<PastRun>& runs,
                                     std::optional<Time> next) {
  std::vector<const PastRun*> story;
  const CalendarDayFinder calendar_days(definition);
  for (const auto& run : runs) {
    if (tells_a_skipped_day(calendar_days, run)) continue;
    if (!next || run.scheduled_at < *next || run.trigger == Trigger::retry) story.push_back(&run);
  }
  return story;
}

void explain_not_due(std::vector<Fact>& facts, const Task& task, Time slot, Time now, const TimeStyle& style) {
  const auto& definition = task.definition;
  std::string text = fmt::format("Slot {} is not due yet: it comes in {}", at(style, slot), away(slot - now));
  std::vector<std::pair<std::string, FactValue>> data{{"slot", slot}};
  if (definition.jitter > Seconds{0}) {
    if (slot == task.state.next_run_at) {
      Time start = slot + jitter_delay(definition, task.state.run_index + 1);
      text += fmt::format(", and with its jitter it starts at {}", at(style, start));
      data.emplace_back("starts_at", start);
    } else {
      text += fmt::format(", and starts up to {} later (--jitter)", format_duration(definition.jitter));
    }
  }
  facts.push_back({"not_due", text + ".", std::move(data)});
}

// A past slot that no run tells of: why history has nothing.
void explain_unrecorded(std::vector<Fact>& facts, const Task& task, Time slot, const SlotHistory& history,
                        const std::vector<SchedulerSeen>& schedulers, Time now, const TimeStyle& style) {
  const auto& accounted = task.state.accounted_until;
  if (!accounted || slot > *accounted) {
    facts.push_back({"pending", fmt::format("Slot {} came due {} ago, and no tick has handled it yet.", at(style, slot), away(now - slot)),
                     {{"slot", slot}}});
    facts.push_back(scheduler_now(schedulers, now, style));
  } else if (history.created_at && slot < *history.created_at) {
    facts.push_back({"before_created", fmt::format("The task was created at {}, after this slot.", at(style, *history.created_at)),
                     {{"created_at", *history.created_at}}});
  } else if (!history.oldest_kept_slot || slot < *history.oldest_kept_slot) {
    auto kept = history.oldest_kept_slot ? fmt::format("the oldest run kept is of {}", at(style, *history.oldest_kept_slot))
                                         : std::string("no run is kept");
    facts.push_back({"before_history",
                     fmt::format("History no longer tells what happened to slot {}: {} (--keep-runs {}).", at(style, slot), kept,
                                 task.definition.keep_runs),
                     {{"slot", slot}, {"keep_runs", number(task.definition.keep_runs)}}});
  } else {
    facts.push_back({"unrecorded",
                     fmt::format("No run records slot {}: the schedule did not plan it then (an edit plans from the "
                                 "time of the edit, and a schedule changed since plans other slots).",
                                 at(style, slot)),
                     {{"slot", slot}}});
  }
}

bool skipped_span_holds(const PastRun& run, Time slot) {
  if (run.status != RunStatus::skipped || run.scheduled_at > slot) return false;
  return slot <= last_skipped_slot(run.reason).value_or(run.scheduled_at);
}

}  // namespace

std::optional<Time> slot_in_question(const Schedule& schedule, Time at, Time now) {
  if (!has_slot_grid(schedule)) return std::nullopt;
  // A time asked to the second, as people write it, is the whole second: an
  // --every task's slots carry milliseconds.
  if (at <= now) return last_slot_at_or_before(schedule, at.time_since_epoch() % 1s == 0ms ? at + 999ms : at);
  return next_slot_after(schedule, at - 1ms);
}

std::vector<Fact> explain_slot(const Task& task, const Schedule& schedule, Time slot, const SlotHistory& history,
                               const std::vector<SchedulerSeen>& schedulers, Time now, const TimeStyle& style) {
  std::vector<Fact> facts;
  if (slot > now) {
    explain_not_due(facts, task, slot, now, style);
    return facts;
  }
  auto story = story_of(task.definition, history.runs, next_slot_after(schedule, slot));
  if (story.empty()) {
    const auto& planned = history.newest_planned_before;
    if (planned && skipped_span_holds(*planned, slot)) {
      facts.push_back({"skipped", fmt::format("Slot {} was skipped, in run {}: {}.", at(style, slot), planned->id, planned->reason),
                       {{"run_id", planned->id}, {"slot", slot}, {"reason", planned->reason}}});
    } else {
      explain_unrecorded(facts, task, slot, history, schedulers, now, style);
    }
    return facts;
  }
  const PastRun* previous = nullptr;
  for (const auto* run : story) {
    explain_attempt(facts, task.definition, schedule, *run, previous, schedulers, now, style);
    if (run->trigger != Trigger::manual) previous = run;
  }
  if (previous) explain_end_of_ladder(facts, task, *previous);
  return facts;
}

std::vector<Fact> explain_run_at(const Task& task, const Schedule& schedule, const std::optional<PastRun>& run,
                                 const std::vector<SchedulerSeen>& schedulers, Time now, const TimeStyle& style) {
  std::vector<Fact> facts;
  if (is_fixed_delay(schedule)) {
    facts.push_back({"no_slots",
                     fmt::format("{} has no planned slots: each run starts {} after the previous one finished "
                                 "(--after-finish).",
                                 task.definition.name, format_duration(std::get<Every>(schedule).interval)),
                     {}});
  } else if (std::holds_alternative<AtBoot>(schedule)) {
    facts.push_back({"no_slots",
                     fmt::format("{} has no planned slots: it runs once after each boot of the machine (--cron "
                                 "@reboot), and when triggered.",
                                 task.definition.name),
                     {}});
  } else {
    facts.push_back({"no_slots", fmt::format("{} has no planned slots: it runs when triggered.", task.definition.name), {}});
  }
  if (!run) {
    facts.push_back({"no_run", "No run of it is kept from before that time.", {}});
    return facts;
  }
  explain_attempt(facts, task.definition, schedule, *run, nullptr, schedulers, now, style);
  return facts;
}

std::vector<Fact> explain_chain(const TaskDefinition& definition,
                                const std::vector<std::pair<std::string, Upstream>>& followers) {
  std::vector<Fact> facts;
  const auto& after = definition.after;
  if (!after.task.empty())
    facts.push_back({"upstream",
                     fmt::format("A run of {} that {} starts it (--after {}), with TASKD_UPSTREAM_RUN_ID.", after.task,
                                 after.on_any_outcome ? "ends, whatever its outcome," : "succeeds", to_string(after)),
                     {{"upstream", after.task}, {"on_any_outcome", after.on_any_outcome}}});
  if (followers.empty()) return facts;
  std::vector<std::string> names;
  std::vector<std::string> described;
  for (const auto& [name, how] : followers) {
    names.push_back(name);
    described.push_back(name + (how.on_any_outcome ? " (whatever the outcome)" : " (on success)"));
  }
  facts.push_back({"followers",
                   fmt::format("When its run has its final outcome it starts {}.", fmt::join(described, ", ")),
                   {{"followers", std::move(names)}}});
  return facts;
}

std::optional<Fact> explain_dst(const Schedule& schedule, Time slot) {
  auto adjustment = dst_adjustment(schedule, slot);
  if (!adjustment) return std::nullopt;
  bool gap = adjustment->kind == DstAdjustment::Kind::ran_after_gap ||
             adjustment->kind == DstAdjustment::Kind::skipped_in_gap;
  std::string rule = gap ? fmt::format("--dst-gap {}", to_string(adjustment->rule.gap))
                         : fmt::format("--dst-repeat {}", to_string(adjustment->rule.repeat));
  return Fact{"dst", fmt::format("Daylight saving time: {}.", describe(*adjustment)),
              {{"dst_rule", std::move(rule)}, {"dst_rule_by_default", adjustment->by_default}}};
}

namespace {

Fact next_without_a_time(const Task& task, const Schedule& schedule, Time now) {
  if (task.definition.schedule_kind == ScheduleKind::manual)
    return {"next", "No run is planned: it runs when triggered.", {{"next_run_at", std::string()}}};
  if (std::holds_alternative<AtBoot>(schedule))
    return {"next",
            "Next: at the next boot of the machine, at the first tick of a scheduler there (--cron @reboot).",
            {{"next_run_at", std::string()}, {"next_kind", std::string("boot")}}};
  if (next_slot_after(schedule, now))
    return {"next", "The next run is planned when the run in flight ends (--after-finish, or --catch-up all).", {}};
  if (task.definition.calendar_days.kept)
    return {"next",
            "No run is planned: the schedule has ended (COUNT or UNTIL), or none of its slots falls on a day of "
            "--only-calendar from now on.",
            {}};
  return {"next", "No run is planned: the schedule has ended (COUNT or UNTIL).", {}};
}

Fact next_retry(const Task& task, const Schedule& schedule, Time next, const TimeStyle& style) {
  const auto& state = task.state;
  int attempt = state.attempt_no;
  auto delay = rung_after(task.definition, attempt);
  std::vector<std::pair<std::string, FactValue>> data{
      {"next_run_at", next}, {"next_kind", std::string("retry")}, {"attempt_no", number(attempt + 1)}, {"rung", number(attempt)}};
  std::string ended = state.last_finished_at
                          ? fmt::format("attempt {} {} at {}", attempt,
                                        outcome_words(state.last_status.value_or(RunStatus::failed)), at(style, *state.last_finished_at))
                          : fmt::format("attempt {}", attempt);
  std::string rung = delay ? fmt::format("rung {} of the ladder ({})", attempt, format_duration(*delay))
                           : fmt::format("rung {} of the ladder", attempt);
  if (is_planned_slot(schedule, next)) {
    data[1].second = std::string("retry_at_slot");
    return {"next",
            fmt::format("Next: attempt {} at the planned slot {}: {} after {} would have run past it, so the retry "
                        "waits for the plan.",
                        attempt + 1, at(style, next), rung, ended),
            std::move(data)};
  }
  return {"next", fmt::format("Next: attempt {} at {}, a retry: {} after {}.", attempt + 1, at(style, next), rung, ended),
          std::move(data)};
}

Fact next_planned(const Task& task, Time next, const TimeStyle& style) {
  const auto& state = task.state;
  Time start = next + jitter_delay(task.definition, state.run_index + 1);
  std::string text = fmt::format("Next: the planned slot {}", at(style, next));
  if (start > next) text += fmt::format(", starting {} later at {} (its jitter)", took(start - next), at(style, start));
  if (state.accounted_until && *state.accounted_until < next)
    text += fmt::format(": the schedule's first slot after {}", at(style, *state.accounted_until));
  return {"next", text + ".", {{"next_run_at", next}, {"next_kind", std::string("planned")}, {"starts_at", start}}};
}

Fact next_start(const Task& task, const Schedule& schedule, Time next, const TimeStyle& style) {
  const auto& state = task.state;
  if (is_fixed_delay(schedule) && state.last_finished_at)
    return {"next",
            fmt::format("Next: at {}, {} after the previous run finished at {} (--after-finish).", at(style, next),
                        format_duration(std::get<Every>(schedule).interval), at(style, *state.last_finished_at)),
            {{"next_run_at", next}, {"next_kind", std::string("fixed_delay")}}};
  return {"next", fmt::format("Next: a start at {}, outside the planned slots (--start-now, or the task was enabled).", at(style, next)),
          {{"next_run_at", next}, {"next_kind", std::string("start")}}};
}

}  // namespace

std::vector<Fact> explain_next(const Task& task, const Schedule& schedule,
                               const std::vector<SchedulerSeen>& schedulers, Time now, const TimeStyle& style) {
  const auto& state = task.state;
  const auto& name = task.definition.name;
  std::vector<Fact> facts;
  if (state.disabled_until_update) {
    facts.push_back({"disabled",
                     fmt::format("It is disabled: {}. Nothing runs until taskd enable {}, or an edit.", state.disabled_reason, name),
                     {{"reason", state.disabled_reason}}});
    return facts;
  }
  if (state.attempt_started_at)
    facts.push_back({"running",
                     fmt::format("Attempt {} is running since {}{}.", state.attempt_no, at(style, *state.attempt_started_at),
                                 state.attempt_timeout_at ? "; its timebox ends at " + at(style, *state.attempt_timeout_at) : ""),
                     {{"attempt_no", number(state.attempt_no)}, {"started_at", *state.attempt_started_at}}});
  if (state.paused)
    facts.push_back({"paused", fmt::format("It is paused: the planned slots that come are skipped until taskd resume {}.", name), {}});
  if (!task.definition.on_host.empty())
    facts.push_back({"on_host", fmt::format("Only the taskd with --host-id {} runs it.", task.definition.on_host),
                     {{"host", task.definition.on_host}}});
  if (!state.next_run_at) {
    facts.push_back(next_without_a_time(task, schedule, now));
    return facts;
  }
  Time next = *state.next_run_at;
  if (next <= now) {
    facts.push_back({"overdue", fmt::format("It has been due since {} ({} ago), and no tick has handled it yet.", at(style, next), away(now - next)),
                     {{"next_run_at", next}}});
    facts.push_back(scheduler_now(schedulers, now, style));
  } else if (state.attempt_no > 0) {
    facts.push_back(next_retry(task, schedule, next, style));
  } else if (is_planned_slot(schedule, next)) {
    facts.push_back(next_planned(task, next, style));
    if (auto dst = explain_dst(schedule, next)) facts.push_back(std::move(*dst));
  } else {
    facts.push_back(next_start(task, schedule, next, style));
  }
  return facts;
}

}  // namespace taskd::core
