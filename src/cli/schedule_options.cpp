#include "cli/schedule_options.hpp"

#include <fmt/format.h>

#include "cli/context.hpp"
#include "core/hash.hpp"

namespace taskd::cli {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

// --tz, or the system's zone ($TZ, else the one the system is set to) when
// it is not given.
Result<void> apply_zone(const std::string& tz, core::TaskDefinition& d) {
  auto zone = core::find_zone(tz);
  if (!zone) return fail(ErrorKind::bad_input, (tz.empty() ? "" : "--tz: ") + zone.error().message);
  d.tz = core::zone_name(*zone);
  return {};
}

Result<void> apply_every(const ScheduleOptions& options, core::TaskDefinition& d) {
  auto interval = core::parse_duration(options.every);
  if (!interval) return fail(ErrorKind::bad_input, "--every: " + interval.error().message);
  if (interval->count() <= 0) return fail(ErrorKind::bad_input, "--every: the interval must be longer than 0s");
  d.schedule_kind = core::ScheduleKind::every;
  d.schedule_spec = options.every;
  d.after_finish = options.after_finish;
  auto phase = TRY(optional_duration(options.phase, "--phase"));
  if (phase && *phase >= *interval)
    return fail(ErrorKind::bad_input,
                fmt::format("--phase {} must be shorter than the interval {}", options.phase, options.every));
  d.phase = phase ? core::Millis{*phase} : core::default_phase(d.name, *interval);
  if (options.tz.empty()) return {};
  if (!core::fits_wall_clock(*interval))
    return fail(ErrorKind::bad_input,
                fmt::format("--every {} --tz {}: on a wall clock the interval must divide a day (30m, 1h, 6h) or be "
                            "whole days (1d, 7d), or its slots fall at other times each day; leave out --tz to count "
                            "it in UTC from the Unix epoch",
                            options.every, options.tz));
  return apply_zone(options.tz, d);
}

// DTSTART: as given, or the start of today in the task's zone.
Result<void> apply_dtstart(const ScheduleOptions& options, core::TaskDefinition& d, core::Time now) {
  if (!options.dtstart.empty()) {
    auto dtstart = core::parse_local(options.dtstart);
    if (!dtstart) return fail(ErrorKind::bad_input, "--dtstart: " + dtstart.error().message);
    d.dtstart = *dtstart;
    return {};
  }
  auto zone = TRY(core::find_zone(d.tz));
  d.dtstart = std::chrono::floor<std::chrono::days>(core::to_local(zone, now));
  return {};
}

Result<void> check_combinations(const ScheduleOptions& options) {
  int kinds = !options.every.empty() + !options.cron.empty() + !options.rrule.empty() + options.manual;
  if (kinds != 1)
    return fail(ErrorKind::usage, "give exactly one schedule: --every DUR, --cron EXPR, --rrule RULE or --manual");
  if (options.manual && (!options.tz.empty() || !options.jitter.empty()))
    return fail(ErrorKind::usage, "--tz and --jitter go with a schedule, not with --manual");
  if (options.every.empty() && (!options.phase.empty() || options.after_finish))
    return fail(ErrorKind::usage, "--phase and --after-finish go with --every");
  if (options.after_finish && !options.tz.empty())
    return fail(ErrorKind::usage, "--tz does not go with --after-finish (a fixed delay has no slots to align)");
  if (options.rrule.empty() && !options.dtstart.empty()) return fail(ErrorKind::usage, "--dtstart goes with --rrule");
  return {};
}

Result<void> apply_wall_clock(const ScheduleOptions& options, core::TaskDefinition& d, core::Time now) {
  TRY(apply_zone(options.tz, d));
  d.schedule_kind = options.cron.empty() ? core::ScheduleKind::rrule : core::ScheduleKind::cron;
  d.schedule_spec = options.cron.empty() ? options.rrule : options.cron;
  if (options.rrule.empty()) return {};
  return apply_dtstart(options, d, now);
}

// --jitter: shorter than the interval, so the plan never drifts.
Result<void> apply_jitter(const ScheduleOptions& options, core::TaskDefinition& d, const core::Schedule& schedule,
                          core::Time now) {
  auto jitter = TRY(optional_duration(options.jitter, "--jitter"));
  if (!jitter) return {};
  if (std::holds_alternative<core::AtBoot>(schedule))
    return fail(ErrorKind::bad_input, "--jitter goes with planned slots, not with --cron @reboot");
  auto interval = core::interval_around(schedule, now);
  if (interval && *jitter >= *interval)
    return fail(ErrorKind::bad_input, fmt::format("--jitter {} must be shorter than the interval {}", options.jitter,
                                                  core::format_duration(*interval)));
  d.jitter = *jitter;
  return {};
}

// One DST option: "" leaves the schedule's default.
template <class Rule>
Result<std::optional<Rule>> optional_dst_rule(const std::string& text, std::string_view option,
                                              Result<Rule> (*parse)(std::string_view)) {
  if (text.empty()) return std::nullopt;
  auto rule = parse(text);
  if (!rule) return fail(ErrorKind::bad_input, fmt::format("{}: {}", option, rule.error().message));
  return *rule;
}

// Refuses DST rules that leave a schedule with slots none (every wall time
// it names falls in a gap they skip: "30 2 * 3 0L" in Europe/Berlin).
Result<void> check_still_runs(const core::TaskDefinition& d, const core::Schedule& schedule, core::Time now) {
  if (!core::next_slot_after(schedule, now)) return {};
  if (core::next_slot_after(core::with_dst(schedule, d.dst), now)) return {};
  return fail(ErrorKind::bad_input, "--dst-gap skip: every slot of this schedule falls in a DST gap, so it would "
                                    "never run (leave --dst-gap at run-after)");
}

// --dst-gap and --dst-repeat, which only a schedule on a wall clock has.
Result<void> apply_dst(const ScheduleOptions& options, core::TaskDefinition& d, const core::Schedule& schedule,
                       core::Time now) {
  auto gap = TRY(optional_dst_rule(options.dst_gap, "--dst-gap", core::parse_dst_gap));
  auto repeat = TRY(optional_dst_rule(options.dst_repeat, "--dst-repeat", core::parse_dst_repeat));
  d.dst = {gap, repeat};
  if (d.dst.any() && !core::follows_wall_clock(schedule))
    return fail(ErrorKind::bad_input,
                fmt::format("{}: only a schedule on a wall clock has DST changes (--cron, --rrule, or --every with "
                            "--tz); this one counts in UTC or has no slots",
                            gap ? "--dst-gap" : "--dst-repeat"));
  return d.dst.any() ? check_still_runs(d, schedule, now) : Result<void>{};
}

}  // namespace

void add_schedule_options(CLI::App& command, ScheduleOptions& options) {
  command.add_option("--every", options.every, "Run every DUR (fixed rate), e.g. 30s, 5m, 1h30m, 1d");
  command.add_option("--cron", options.cron, "Run on a cron expression, e.g. '*/15 * * * *' (wall clock in --tz)");
  command.add_option("--rrule", options.rrule, "Run on an RFC 5545 RRULE, e.g. 'FREQ=WEEKLY;BYDAY=MO' (in --tz)");
  command.add_option("--phase", options.phase, "--every: offset of the slots in the interval, from the epoch in UTC or --tz (default: name hash)");
  command.add_flag("--after-finish", options.after_finish, "--every: fixed delay after the previous run finished");
  command.add_flag("--manual", options.manual, "No schedule: only taskd trigger runs the task");
  command.add_option("--tz", options.tz, "Time zone of --cron and --rrule (default: $TZ, else the system's); with --every, align to its wall clock");
  command.add_option("--dtstart", options.dtstart, "--rrule: DTSTART as wall time in --tz (default: today 00:00)");
  command.add_option("--jitter", options.jitter, "Start each run a stable random delay in [0, DUR) after its slot");
  command.add_option("--dst-gap", options.dst_gap,
                     "A wall time the clock skips: run-after (run right after the gap) or skip ('' for the "
                     "schedule's default)");
  command.add_option("--dst-repeat", options.dst_repeat,
                     "A wall time the clock shows twice: once (the first) or twice ('' for the schedule's default)");
}

// A cron year field whose years have all passed (or whose dates never fall
// in them) leaves no slot: refused, as an expression that never runs is.
Result<void> require_a_slot_in_its_years(const core::Schedule& schedule, const core::TaskDefinition& d,
                                         core::Time now) {
  const auto* cron = std::get_if<core::Cron>(&schedule);
  if (!cron || !cron->spec.years || core::next_slot_after(schedule, now)) return {};
  return fail(ErrorKind::bad_input,
              fmt::format("cron: field 7 (year) of \"{}\": no slot from now on falls in the years it lists",
                          d.schedule_spec));
}

Result<core::Schedule> apply_schedule(const ScheduleOptions& options, core::TaskDefinition& d, core::Time now) {
  TRY(check_combinations(options));
  if (options.manual) {
    d.schedule_kind = core::ScheduleKind::manual;
    d.schedule_spec.clear();
    TRY(apply_dst(options, d, core::Manual{}, now));
    return core::Manual{};
  }
  TRY(options.every.empty() ? apply_wall_clock(options, d, now) : apply_every(options, d));
  auto schedule = TRY(core::schedule_of(d));
  TRY(require_a_slot_in_its_years(schedule, d, now));
  TRY(apply_dst(options, d, schedule, now));
  TRY(apply_jitter(options, d, schedule, now));
  return core::with_dst(std::move(schedule), d.dst);
}

}  // namespace taskd::cli
