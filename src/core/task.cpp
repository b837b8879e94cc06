#include "core/task.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <fmt/format.h>

#include "core/recent_cache.hpp"
#include "core/text.hpp"

namespace taskd::core {
namespace {

template <class Enum, std::size_t N>
using Names = std::array<std::pair<Enum, std::string_view>, N>;

constexpr Names<ScheduleKind, 4> schedule_kind_names{{{ScheduleKind::every, "every"},
                                                      {ScheduleKind::cron, "cron"},
                                                      {ScheduleKind::rrule, "rrule"},
                                                      {ScheduleKind::manual, "manual"}}};
constexpr Names<Overlap, 3> overlap_names{{{Overlap::skip, "skip"}, {Overlap::queue, "queue"}, {Overlap::replace, "replace"}}};
constexpr Names<RunStatus, 8> run_status_names{{{RunStatus::queued, "queued"},
                                                {RunStatus::running, "running"},
                                                {RunStatus::succeeded, "succeeded"},
                                                {RunStatus::failed, "failed"},
                                                {RunStatus::timed_out, "timed_out"},
                                                {RunStatus::dropped, "dropped"},
                                                {RunStatus::skipped, "skipped"},
                                                {RunStatus::lost, "lost"}}};
constexpr Names<Trigger, 3> trigger_names{{{Trigger::schedule, "schedule"}, {Trigger::retry, "retry"}, {Trigger::manual, "manual"}}};
constexpr Names<NotifyFormat, 2> notify_format_names{{{NotifyFormat::json, "json"}, {NotifyFormat::slack, "slack"}}};
constexpr Names<Condition, 4> condition_names{{{Condition::active, "active"},
                                               {Condition::paused, "paused"},
                                               {Condition::disabled, "disabled"},
                                               {Condition::failing, "failing"}}};

template <class Enum, std::size_t N>
std::string_view name_of(const Names<Enum, N>& names, Enum value) {
  for (const auto& [candidate, name] : names) {
    if (candidate == value) return name;
  }
  return "?";
}

template <class Enum, std::size_t N>
Result<Enum> parse_name(const Names<Enum, N>& names, std::string_view text, std::string_view what) {
  std::string choices;
  for (const auto& [value, name] : names) {
    if (name == text) return value;
    choices += choices.empty() ? std::string(name) : fmt::format(", {}", name);
  }
  return fail(ErrorKind::bad_input, fmt::format("unknown {} \"{}\" (expected one of: {})", what, text, choices));
}

bool is_task_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("._:@/-").find(c) != std::string_view::npos;
}

// The whole UTF-8 sequence that starts at `at`, so a message never cuts a
// character in half.
std::string_view utf8_character_at(std::string_view text, std::size_t at) {
  auto lead = static_cast<unsigned char>(text[at]);
  std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return text.substr(at, length);
}

}  // namespace

std::string_view to_string(ScheduleKind kind) { return name_of(schedule_kind_names, kind); }
std::string_view to_string(Overlap overlap) { return name_of(overlap_names, overlap); }
std::string_view to_string(RunStatus status) { return name_of(run_status_names, status); }
std::string_view to_string(Trigger trigger) { return name_of(trigger_names, trigger); }
Result<ScheduleKind> parse_schedule_kind(std::string_view text) {
  return parse_name(schedule_kind_names, text, "schedule kind");
}
std::string_view to_string(NotifyFormat format) { return name_of(notify_format_names, format); }
Result<NotifyFormat> parse_notify_format(std::string_view text) {
  return parse_name(notify_format_names, text, "notify format");
}

Result<Overlap> parse_overlap(std::string_view text) { return parse_name(overlap_names, text, "overlap mode"); }
Result<RunStatus> parse_run_status(std::string_view text) { return parse_name(run_status_names, text, "run status"); }
Result<Trigger> parse_trigger(std::string_view text) { return parse_name(trigger_names, text, "trigger"); }
std::string_view to_string(Condition condition) { return name_of(condition_names, condition); }
Result<Condition> parse_condition(std::string_view text) { return parse_name(condition_names, text, "state"); }

std::string to_string(const CatchUp& catch_up) {
  switch (catch_up.kind) {
    case CatchUp::Kind::latest: return "latest";
    case CatchUp::Kind::none: return "none";
    case CatchUp::Kind::all: return catch_up.most ? fmt::format("all:{}", *catch_up.most) : "all";
  }
  return "?";
}

Result<CatchUp> parse_catch_up(std::string_view text) {
  if (text == "latest") return CatchUp{CatchUp::Kind::latest, std::nullopt};
  if (text == "none") return CatchUp{CatchUp::Kind::none, std::nullopt};
  if (text == "all") return CatchUp{CatchUp::Kind::all, std::nullopt};
  int most = 0;
  auto digits = text.substr(std::min<std::size_t>(4, text.size()));
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), most);
  if (text.starts_with("all:") && error == std::errc() && end == digits.data() + digits.size() && most >= 1 &&
      !digits.empty() && digits.front() != '+') {
    return CatchUp{CatchUp::Kind::all, most};
  }
  return fail(ErrorKind::bad_input,
              fmt::format("\"{}\" is not a catch-up policy (latest, none, all or all:N with N from 1)", text));
}

Condition condition_of(const TaskState& state) {
  if (state.disabled_until_update) return Condition::disabled;
  if (state.paused) return Condition::paused;
  return is_failure(state.last_status) ? Condition::failing : Condition::active;
}

bool is_failure(std::optional<RunStatus> status) {
  return status == RunStatus::failed || status == RunStatus::timed_out || status == RunStatus::lost;
}

std::vector<Seconds> default_retry_ladder() {
  using namespace std::chrono_literals;
  return {0s, 1min, 5min, 15min, 30min, 1h};
}

Result<std::vector<Seconds>> parse_retry_ladder(std::string_view text) {
  std::vector<Seconds> ladder;
  for (const auto& item : list_items(text)) {
    auto delay = parse_duration(item);
    if (!delay) return fail(ErrorKind::bad_input, "--retry: " + delay.error().message);
    if (!ladder.empty() && *delay < ladder.back())
      return fail(ErrorKind::bad_input, fmt::format("--retry \"{}\": the delays must not decrease ({} comes after {})",
                                                    text, item, format_duration(ladder.back())));
    ladder.push_back(*delay);
  }
  return ladder;
}

std::string retry_ladder_text(const std::vector<Seconds>& ladder) {
  std::string text;
  for (auto delay : ladder) text += (text.empty() ? "" : ",") + format_duration(delay);
  return text.empty() ? "none" : text;
}

namespace {

// A name of `what`: 1 to 128 ASCII letters, digits and ._:@/-, not starting with '-'.
Result<std::string> validate_identifier(std::string_view what, std::string_view name) {
  if (name.empty()) return fail(ErrorKind::bad_input, fmt::format("invalid {} \"\": it is empty", what));
  if (name.size() > 128)
    return fail(ErrorKind::bad_input,
                fmt::format("invalid {} \"{}…\": longer than 128 characters", what, name.substr(0, 20)));
  auto bad = std::find_if_not(name.begin(), name.end(), is_task_name_char);
  if (bad != name.end()) {
    auto at = static_cast<std::size_t>(bad - name.begin());
    return fail(ErrorKind::bad_input,
                fmt::format("invalid {} \"{}\": character {} ('{}') is not an ASCII letter, digit or one of "
                            "._:@/-",
                            what, name, at + 1, utf8_character_at(name, at)));
  }
  if (name.front() == '-')
    return fail(ErrorKind::bad_input, fmt::format("invalid {} \"{}\": it must not start with '-'", what, name));
  return std::string(name);
}

}  // namespace

Result<std::string> validate_task_name(std::string_view name) { return validate_identifier("task name", name); }

Result<std::string> validate_host_id(std::string_view name) { return validate_identifier("host id", name); }

Result<std::string> validate_calendar_name(std::string_view name) { return validate_identifier("calendar name", name); }

namespace {

bool is_account_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '-') return false;
  if (name.back() == '$') name.remove_suffix(1);
  return !name.empty() && std::ranges::all_of(name, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
}

}  // namespace

Result<RunAs> parse_run_as(std::string_view text) {
  auto colon = text.find(':');
  RunAs run_as{std::string(text.substr(0, colon)),
               colon == std::string_view::npos ? std::string() : std::string(text.substr(colon + 1))};
  bool valid = is_account_name(run_as.user) && (colon == std::string_view::npos || is_account_name(run_as.group));
  if (!valid)
    return fail(ErrorKind::bad_input,
                fmt::format("\"{}\" is not NAME or NAME:GROUP (names of letters, digits and ._-)", printable(text)));
  return run_as;
}

bool runs_at_boot(const TaskDefinition& definition) {
  return definition.schedule_kind == ScheduleKind::cron && definition.schedule_spec == at_boot_spec;
}

namespace {

Result<Schedule> own_schedule_of(const TaskDefinition& definition) {
  switch (definition.schedule_kind) {
    case ScheduleKind::every: {
      auto interval = parse_duration(definition.schedule_spec);
      if (!interval) return fail(ErrorKind::bad_input, "--every: " + interval.error().message);
      if (interval->count() <= 0) return fail(ErrorKind::bad_input, "--every: the interval must be longer than 0s");
      if (definition.tz.empty()) return Every{*interval, definition.phase, definition.after_finish};
      auto zone = TRY(find_zone(definition.tz));
      return Every{*interval, definition.phase, definition.after_finish, zone, definition.dst};
    }
    case ScheduleKind::cron: {
      if (runs_at_boot(definition)) return AtBoot{};
      auto zone = TRY(find_zone(definition.tz));
      auto spec = TRY(parse_cron(definition.schedule_spec, definition.name));
      return Cron{spec, zone, definition.dst};
    }
    case ScheduleKind::rrule: {
      auto zone = TRY(find_zone(definition.tz));
      if (!definition.dtstart) return fail(ErrorKind::bad_input, "--rrule needs a DTSTART");
      auto spec = TRY(parse_rrule(definition.schedule_spec, *definition.dtstart));
      return Recurrence{spec, zone, definition.dst};
    }
    case ScheduleKind::manual: return Manual{};
  }
  return fail(ErrorKind::internal, "unknown schedule kind");
}

}  // namespace

Result<Zone> set_dates_zone(const TaskDefinition& definition) {
  return find_zone(definition.tz.empty() ? "UTC" : definition.tz);
}

namespace {

// `schedule` with the definition's --rdate and --exdate, and `days` for its calendars' days.
Result<Schedule> with_set_dates(Schedule schedule, const TaskDefinition& definition, const CalendarDays& days) {
  if (definition.rdate.empty() && definition.exdate.empty() && days.empty()) return schedule;
  auto zone = TRY(set_dates_zone(definition));
  return with_changes(std::move(schedule),
                      std::make_shared<const SlotChanges>(definition.rdate, definition.exdate, zone, days));
}

}  // namespace

Result<Schedule> with_set_dates(Schedule schedule, const TaskDefinition& definition) {
  return with_set_dates(std::move(schedule), definition, definition.calendar_days);
}

std::optional<SetDate> excluding_exdate(const TaskDefinition& definition, Time t) {
  if (definition.exdate.empty()) return std::nullopt;
  auto own = own_schedule_of(definition);
  auto zone = set_dates_zone(definition);
  if (!own || !zone || !is_planned_slot(*own, t)) return std::nullopt;
  return removing_date(definition.exdate, *zone, t);
}

CalendarDayFinder::CalendarDayFinder(const TaskDefinition& definition) {
  if (definition.calendar_days.empty()) return;
  auto own = own_schedule_of(definition);
  auto zone = set_dates_zone(definition);
  if (!own || !zone) return;
  auto without = with_set_dates(*own, definition, {});
  auto full = with_set_dates(std::move(*own), definition);
  if (!without || !full) return;
  schedules_.emplace(std::move(*without), std::move(*full), *zone);
}

std::optional<date::local_days> CalendarDayFinder::removing(Time t) const {
  if (!schedules_) return std::nullopt;
  const auto& [without, full, zone] = *schedules_;
  if (!is_planned_slot(without, t) || is_planned_slot(full, t)) return std::nullopt;
  return std::chrono::floor<date::days>(to_local(zone, t));
}

Result<Schedule> schedule_of(const TaskDefinition& definition) {
  auto key = schedule_key(definition);
  if (!key) return with_set_dates(TRY(own_schedule_of(definition)), definition);
  constexpr std::size_t kept_schedules = 64;
  static RecentCache<std::string, Result<Schedule>> cache(kept_schedules);
  return cache.value_of(std::move(*key), [&] { return own_schedule_of(definition); });
}

std::optional<std::string> schedule_key(const TaskDefinition& d) {
  bool cron = d.schedule_kind == ScheduleKind::cron && d.schedule_spec.find('H') == std::string::npos;
  bool set_dates = !d.rdate.empty() || !d.exdate.empty() || !d.calendar_days.empty();
  if ((!cron && d.schedule_kind != ScheduleKind::rrule) || set_dates) return std::nullopt;
  // Without a zone of its own, the schedule is on $TZ's clock.
  const char* tz_variable = d.tz.empty() ? std::getenv("TZ") : nullptr;
  auto dtstart = d.dtstart ? format_local(*d.dtstart) : std::string();
  // Appended, not formatted: a listing makes one for every task it reads.
  std::string key;
  for (std::string_view part : {to_string(d.schedule_kind), std::string_view(d.schedule_spec), std::string_view(d.tz),
                                std::string_view(tz_variable ? tz_variable : ""), std::string_view(dtstart),
                                d.dst.gap ? to_string(*d.dst.gap) : "", d.dst.repeat ? to_string(*d.dst.repeat) : ""}) {
    key.append(part);
    key.push_back('\n');
  }
  key.pop_back();
  return key;
}

Result<Schedule> schedule_without_skipped_days(const TaskDefinition& definition) {
  return with_set_dates(TRY(own_schedule_of(definition)), definition,
                        {.skipped = {}, .kept = definition.calendar_days.kept});
}

namespace {

std::string schedule_text(const TaskDefinition& definition) {
  switch (definition.schedule_kind) {
    case ScheduleKind::every: {
      // Built by hand: `list` describes every task it lists, a million at times.
      std::string text = "every " + definition.schedule_spec;
      if (definition.after_finish) text += " after finish";
      if (!definition.tz.empty()) text += " (" + definition.tz + ")";
      return text;
    }
    case ScheduleKind::cron:
      if (runs_at_boot(definition)) return "cron @reboot (once after each boot)";
      return "cron " + definition.schedule_spec + " (" + definition.tz + ")";
    case ScheduleKind::rrule:
      return fmt::format("rrule {} from {} ({})", definition.schedule_spec,
                         definition.dtstart ? format_local(*definition.dtstart) : "?", definition.tz);
    case ScheduleKind::manual: return "manual";
  }
  return std::string(to_string(definition.schedule_kind));
}

}  // namespace

std::string describe_schedule(const TaskDefinition& definition) {
  if (definition.after.task.empty()) return schedule_text(definition);
  auto after = "after " + to_string(definition.after);
  if (definition.schedule_kind == ScheduleKind::manual) return after;
  return schedule_text(definition) + " + " + after;
}

}  // namespace taskd::core
