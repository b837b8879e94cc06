#pragma once
// The schedule options that `add` and `preview` share: one of --every,
// --cron or --rrule, with --phase, --after-finish, --tz, --dtstart and the
// DST rules.
#include <CLI/CLI.hpp>
#include <string>

#include "core/task.hpp"

namespace taskd::cli {

struct ScheduleOptions {
  std::string every;
  std::string cron;
  std::string rrule;
  std::string phase;
  std::string tz;
  std::string dtstart;
  std::string jitter;
  bool after_finish = false;
  bool manual = false;  // no schedule: only `taskd trigger` runs the task
  std::string dst_gap;     // "": the schedule's default
  std::string dst_repeat;  // "": the schedule's default
};

void add_schedule_options(CLI::App& command, ScheduleOptions& options);

// Fills the definition's schedule fields (its name must be set: it seeds the
// default phase and cron's H) and returns the schedule they describe.
core::Result<core::Schedule> apply_schedule(const ScheduleOptions& options, core::TaskDefinition& definition,
                                            core::Time now);

}  // namespace taskd::cli
