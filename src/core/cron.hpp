#pragma once
// Cron expressions: 5 fields (minute hour day-of-month month day-of-week), or
// 6 with seconds first, or 7 with seconds first and the year last (1970-2099,
// as Quartz writes it); numbers, ranges, steps, lists, month and weekday
// names, 7 = Sunday, @hourly @daily @midnight @weekly @monthly @yearly
// @annually, Vixie's rule (day-of-month and day-of-week OR-ed when both are
// restricted), Jenkins' H / H(a-b) (a stable value from the task's name), and
// the days that depend on the month, as Quartz writes them: L, L-N, NW, LW in
// the day of month, D#N and DL in the day of week.
#include <bitset>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/time.hpp"
#include "core/zone.hpp"

namespace taskd::core {

inline constexpr int cron_first_year = 1970;
inline constexpr int cron_last_year = 2099;
using CronYears = std::bitset<cron_last_year - cron_first_year + 1>;  // bit Y - cron_first_year

struct CronSpec {
  std::bitset<60> seconds;  // {0} for a 5-field expression
  std::bitset<60> minutes;
  std::bitset<24> hours;
  std::bitset<32> days_of_month;  // bits 1..31
  std::bitset<13> months;         // bits 1..12
  std::bitset<7> days_of_week;    // bits 0..6, Sunday = 0 (7 folds into 0)
  std::optional<CronYears> years;  // none: every year (no year field)
  // Days found from the month they fall in, each also a day of its field:
  std::bitset<31> days_before_last;   // bit N: L-N, the last day less N days (L: bit 0)
  std::bitset<32> nearest_weekdays;   // bit N: NW, the weekday nearest day N within its month
  bool last_weekday = false;          // LW, the month's last Monday-to-Friday
  std::bitset<35> nth_weekdays;       // bit 5 * D + N - 1: D#N, the Nth weekday D of the month
  std::bitset<7> last_weekdays;       // bit D: DL, the month's last weekday D
  bool day_of_month_restricted = false;  // the field does not start with * or ?
  bool day_of_week_restricted = false;
  // The hour field starts with '*' ("*", "*/2"): at DST changes such a job
  // follows the clock; any other job is a fixed time (see cron_next_after).
  bool hour_follows_clock = false;
};

// Parses `expression`; `task_name` seeds H. An error names the field and the
// position: `cron: field 3 (day of month): 32 is out of range 1-31`. An
// expression that can never match (`0 0 30 2 *`) is an error too.
Result<CronSpec> parse_cron(std::string_view expression, std::string_view task_name);

// The DST rule of cronie for the job: clock_following_dst when its hour
// field starts with '*' (a skipped wall time does not run; in a repeated hour
// it runs in both passes), fixed_time_dst for any other (a time in a skipped
// hour runs once, at the end of the gap; one in a repeated hour runs once,
// at its first occurrence).
DstRule cron_default_dst(const CronSpec& spec);

// The first wall-clock time at or after `from` that the expression names.
std::optional<LocalTime> cron_next_wall(const CronSpec& spec, LocalTime from);

// The first slot strictly after `t`, wall clock in `zone`, at DST changes as
// `policy` says, each part it leaves unset as cronie does (cron_default_dst).
std::optional<Time> cron_next_after(const CronSpec& spec, Zone zone, Time t, DstPolicy policy = {});

}  // namespace taskd::core
