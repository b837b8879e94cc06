#pragma once
// What a task is (its definition), where it stands (its state), and what a
// run of it left behind. Field names follow SPEC.md.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/chain.hpp"
#include "core/duration.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/schedule.hpp"
#include "core/time.hpp"
#include "core/zone.hpp"

namespace taskd::core {

enum class ScheduleKind { every, cron, rrule, manual };
enum class Overlap { skip, queue, replace };
enum class RunStatus { queued, running, succeeded, failed, timed_out, dropped, skipped, lost };
enum class Trigger { schedule, retry, manual };
// What a tick does with planned slots that came due while no scheduler ran
// them (--catch-up): run the latest, none, or every one (at most `most`).
struct CatchUp {
  enum class Kind { latest, none, all } kind = Kind::latest;
  std::optional<int> most;  // all:N
  bool operator==(const CatchUp&) const = default;
};
// Where a task stands, as `list --state` selects it: disabled before
// paused, paused before failing (its last attempt failed, timed out or was
// lost: it is being retried).
enum class Condition { active, paused, disabled, failing };

std::string_view to_string(ScheduleKind kind);
std::string_view to_string(Overlap overlap);
std::string_view to_string(RunStatus status);
std::string_view to_string(Trigger trigger);
Result<ScheduleKind> parse_schedule_kind(std::string_view text);
Result<Overlap> parse_overlap(std::string_view text);
Result<RunStatus> parse_run_status(std::string_view text);
Result<Trigger> parse_trigger(std::string_view text);
std::string_view to_string(Condition condition);
Result<Condition> parse_condition(std::string_view text);

// What --notify-url posts: taskd's JSON object, or a chat webhook's
// {"text": "..."} (Slack, Mattermost, Matrix hookshot).
enum class NotifyFormat { json, slack };
std::string_view to_string(NotifyFormat format);
Result<NotifyFormat> parse_notify_format(std::string_view text);

// "latest", "none", "all" or "all:N".
std::string to_string(const CatchUp& catch_up);
Result<CatchUp> parse_catch_up(std::string_view text);

// An argv vector, or (with `shell`) one string for /bin/sh -c.
struct Command {
  std::vector<std::string> argv;
  bool shell = false;
  bool operator==(const Command&) const = default;
};

using EnvVar = std::pair<std::string, std::string>;

struct TaskDefinition {
  std::string name;
  Command command;
  ScheduleKind schedule_kind = ScheduleKind::every;
  std::string schedule_spec;  // as the user wrote it: "5m", a cron line, an RRULE
  std::string tz;             // an IANA zone name; empty only for schedules without wall clock
  std::optional<LocalTime> dtstart;  // rrule: DTSTART, a wall time in tz
  bool after_finish = false;
  Millis phase{0};
  Seconds jitter{0};
  std::optional<Seconds> timeout;    // none: half the interval; 0s: no timebox (--timeout none)
  Seconds kill_grace{10};
  std::optional<Seconds> tolerance;  // none: 10 % of the interval
  std::vector<Seconds> retry;
  std::vector<int> permanent_exit{78};
  Overlap overlap = Overlap::skip;
  std::string owner;
  std::string group;
  int priority = 0;
  std::string cwd;
  std::vector<EnvVar> env;
  std::string notify;  // run by /bin/sh -c when the task fails, recovers or is disabled; empty: none
  int keep_runs = 1000;  // finished runs the history keeps of the task
  // Bytes of output each run keeps: the head and the tail of what it wrote.
  std::int64_t keep_output = default_keep_output;
  std::string on_host;   // runs only on the taskd of this --host-id; empty: on any
  ResourceLimits limits;  // applied to each run's cgroup; a run that cannot have them fails
  // `taskd check` is CRITICAL when no run succeeded for this long (counted from
  // the creation before the first success); none: never.
  std::optional<Seconds> alert_after;
  CatchUp catch_up;
  std::optional<Seconds> catch_up_window;  // missed slots older than this are skipped; none: no limit
  Upstream after;  // --after: a final outcome of its run starts this task
  DstPolicy dst;  // at DST changes (a schedule on a wall clock only); unset parts: the schedule's default
  // When the retry ladder runs out: disabled until the next update, instead
  // of going on with the next planned slot.
  bool disable_when_exhausted = false;
  std::string user;  // --user: "NAME" or "NAME:GROUP" the run switches to; empty: the scheduler's own
  std::string env_file;  // --env-file: an absolute path each run reads NAME=VALUE lines from; empty: none
  std::string mail_to;  // --mail-to: "ADDR[,ADDR]" mailed what --notify is told; empty: no mail
  std::string ping_url;  // --ping-url: pinged at each run's start and end (healthchecks.io); empty: none
  std::string notify_url;  // --notify-url: posted what --notify is told; empty: none
  NotifyFormat notify_format = NotifyFormat::json;
  // --rdate and --exdate: slots added to the schedule's and taken from them,
  // in the task's zone (UTC for --every without one).
  std::vector<SetDate> rdate;
  std::vector<SetDate> exdate;
  // --skip-calendar and --only-calendar: calendars by name, and their days
  // as they were when the task was last written (ops reads them from the
  // database then, and again when a calendar is replaced).
  std::vector<std::string> skip_calendar;
  std::string only_calendar;
  CalendarDays calendar_days;
  // The fields (core/defaults.hpp) the task does not set itself: their
  // values are the database's defaults, kept up to date when those change.
  std::vector<std::string> from_defaults;
  bool operator==(const TaskDefinition&) const = default;
};

struct TaskState {
  std::optional<Time> next_run_at;
  std::optional<Time> last_run_at;  // start of the last attempt
  std::optional<Time> last_finished_at;
  std::optional<RunStatus> last_status;
  int attempt_no = 0;
  std::string attempt_uid;
  std::optional<Time> attempt_started_at;
  std::optional<Time> attempt_timeout_at;
  std::int64_t run_index = 0;
  bool disabled_until_update = false;
  std::string disabled_reason;
  bool paused = false;
  // The latest planned slot that already has its row in history; slots after
  // it that are skipped over get a SKIPPED row, so none disappears silently.
  std::optional<Time> accounted_until;
  std::optional<Time> last_succeeded_at;  // end of the last run that succeeded
  // The failing streak: when its first failed attempt ended, and when its
  // retry ladder first ran out (the plan went on); a success clears both.
  std::optional<Time> failing_since;
  std::optional<Time> ladder_exhausted_at;
};

struct Task {
  std::int64_t id = 0;
  TaskDefinition definition;
  TaskState state;
  // The schedule the definition describes, parsed once where the task is
  // read or built; none when it was not parsed (a row read for a listing)
  // or does not parse (a malformed row).
  std::optional<Schedule> schedule;
};

Condition condition_of(const TaskState& state);
// Whether an attempt that ended so failed: failed, timed out or lost.
bool is_failure(std::optional<RunStatus> status);

// The default retry ladder of SPEC.md: 0s,1m,5m,15m,30m,1h.
std::vector<Seconds> default_retry_ladder();
// --retry's text: delays that do not decrease ("0s,1m,5m"), or "none" for
// no retries; the error names --retry.
Result<std::vector<Seconds>> parse_retry_ladder(std::string_view text);
// The text parse_retry_ladder reads back to `ladder`.
std::string retry_ladder_text(const std::vector<Seconds>& ladder);

// A task name: letters, digits and ._:@/- , 1 to 128 characters.
Result<std::string> validate_task_name(std::string_view name);
// A host's name on a shared store (--host-id, --on-host): as a task name.
Result<std::string> validate_host_id(std::string_view name);
Result<std::string> validate_calendar_name(std::string_view name);

// Whom a task runs as (--user NAME[:GROUP]): a user, and a group in place
// of the user's primary group (empty: the user's).
struct RunAs {
  std::string user;
  std::string group;
};
// "NAME" or "NAME:GROUP", each a name as useradd and groupadd take them:
// letters, digits and ._- (a '$' at the end), not starting with '-', 1 to 64
// characters.
Result<RunAs> parse_run_as(std::string_view text);

// The cron line of a task that runs once after each boot (--cron @reboot).
inline constexpr std::string_view at_boot_spec = "@reboot";
bool runs_at_boot(const TaskDefinition& definition);

// The schedule a definition describes, with its --rdate and --exdate.
// Kept for the schedule keys met last: a million tasks share a few.
Result<Schedule> schedule_of(const TaskDefinition& definition);
// The texts that alone make a cron or RRULE schedule, as one key; none for
// a schedule that more takes part in (cron's H, seeded by the name; set
// dates) or of another kind.
std::optional<std::string> schedule_key(const TaskDefinition& definition);
// The --exdate that removes `t`, a slot the definition's schedule has
// without them; none when `t` is no such slot or none removes it.
std::optional<SetDate> excluding_exdate(const TaskDefinition& definition, Time t);
// Which day of the definition's calendars removes a slot: the schedules
// with and without them made once, for the many slots explain asks about.
class CalendarDayFinder {
 public:
  explicit CalendarDayFinder(const TaskDefinition& definition);
  // The day, in the task's zone, that removes `t`, a slot its schedule has
  // without the calendars: none when none does.
  std::optional<date::local_days> removing(Time t) const;

 private:
  std::optional<std::tuple<Schedule, Schedule, Zone>> schedules_;  // without the days, with them, the zone
};
// `schedule` with the definition's --rdate, --exdate and calendar days.
Result<Schedule> with_set_dates(Schedule schedule, const TaskDefinition& definition);
// The zone a task's --rdate and --exdate wall times and its calendars' days
// are read in: its --tz, else UTC.
Result<Zone> set_dates_zone(const TaskDefinition& definition);
// The schedule as it would be without the days of --skip-calendar (its
// other changes kept): on those days, its slots are the ones they remove.
Result<Schedule> schedule_without_skipped_days(const TaskDefinition& definition);

// "every 5m", "every 5m after finish", "manual".
std::string describe_schedule(const TaskDefinition& definition);

}  // namespace taskd::core
