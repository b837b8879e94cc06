#include "core/task_fields.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>

#include "core/alerts.hpp"
#include "core/env_file.hpp"
#include "core/limits.hpp"
#include "core/mail.hpp"

namespace taskd::core {
namespace {

using Definition = TaskDefinition;

// Where a field is in a definition: a member, or a member of its limits.
template <auto member>
struct Of {
  static auto& in(Definition& d) { return d.*member; }
  static const auto& in(const Definition& d) { return d.*member; }
};
template <auto member>
struct LimitOf {
  static auto& in(Definition& d) { return d.limits.*member; }
  static const auto& in(const Definition& d) { return d.limits.*member; }
};

std::unexpected<Error> bad_option(const TaskField& field, std::string_view message) {
  return fail(ErrorKind::bad_input, fmt::format("{}: {}", field.flag(), message));
}

// `parse_text`'s value of `text`; its error names the option.
template <auto parse_text>
auto parsed(const TaskField& field, std::string_view text) -> decltype(parse_text(text)) {
  auto value = parse_text(text);
  if (!value) return bad_option(field, value.error().message);
  return value;
}

// How a field's value is written as text, stored and read back: each codec
// has a Value, parse (the option's text), text, value (stored) and read.
struct Text {
  using Value = std::string;
  static Result<Value> parse(const TaskField&, std::string_view text) { return std::string(text); }
  static std::string text(const Value& value) { return value; }
  static FieldValue value(const Value& value) { return value; }
  static constexpr auto read = stored_text;
};

template <int least>
struct Count {
  using Value = int;
  static Result<Value> parse(const TaskField& field, std::string_view text) {
    int number = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (error != std::errc() || end != text.data() + text.size()) return bad_option(field, "expected a whole number");
    if (number < least)
      return fail(ErrorKind::bad_input, fmt::format("{} {} must be at least {}", field.flag(), number, least));
    return number;
  }
  static std::string text(Value value) { return std::to_string(value); }
  static FieldValue value(Value value) { return std::int64_t{value}; }
  static constexpr auto read = stored_integer_from<int, least, std::numeric_limits<int>::max()>;
};

struct Duration {
  using Value = Seconds;
  static Result<Value> parse(const TaskField& field, std::string_view text) {
    return parsed<parse_duration>(field, text);
  }
  static std::string text(Value value) { return format_duration(value); }
  static FieldValue value(Value value) { return value.count(); }
  static constexpr auto read = stored_duration;
};

// None when the text is empty.
struct OptionalDuration {
  using Value = std::optional<Seconds>;
  static Result<Value> parse(const TaskField& field, std::string_view text) {
    if (text.empty()) return std::nullopt;
    return TRY(Duration::parse(field, text));
  }
  static std::string text(const Value& value) { return value ? format_duration(*value) : ""; }
  static FieldValue value(const Value& value) { return value ? FieldValue(value->count()) : FieldValue(); }
  static constexpr auto read = stored_optional<stored_duration>;
};

// One longer than 0s, when given.
struct PositiveDuration : OptionalDuration {
  static Result<Value> parse(const TaskField& field, std::string_view text) {
    auto duration = TRY(OptionalDuration::parse(field, text));
    if (duration && duration->count() <= 0) return bad_option(field, "must be longer than 0s");
    return duration;
  }
};

// "none" as "": never.
struct PositiveDurationOrNone : PositiveDuration {
  static Result<Value> parse(const TaskField& field, std::string_view text) {
    return PositiveDuration::parse(field, text == "none" ? "" : text);
  }
};

// "true" or "false".
struct Flag {
  using Value = bool;
  static Result<Value> parse(const TaskField& field, std::string_view text) {
    if (text != "true" && text != "false") return bad_option(field, "expected true or false");
    return text == "true";
  }
  static std::string text(Value value) { return value ? "true" : "false"; }
  static FieldValue value(Value value) { return value; }
  static constexpr auto read = stored_flag;
};

// A timebox: a duration longer than 0s, "none" (held as 0s: no timebox), or
// nothing (the default).
struct Timebox : PositiveDuration {
  static Result<Value> parse(const TaskField& field, std::string_view text) {
    if (text == "none") return Seconds{0};
    return PositiveDuration::parse(field, text);
  }
  static std::string text(const Value& value) {
    return value == Seconds{0} ? std::string("none") : PositiveDuration::text(value);
  }
};

// --mail-to's addresses, checked, kept as given.
struct MailTo : Text {
  static Result<Value> parse(const TaskField& field, std::string_view text) {
    if (!text.empty()) TRY(parsed<parse_mail_to>(field, text));
    return std::string(text);
  }
};

// An http:// or https:// URL, checked, kept as given.
struct AlertUrl : Text {
  static Result<Value> parse(const TaskField& field, std::string_view text) {
    if (!text.empty()) TRY(parsed<parse_alert_url>(field, text));
    return std::string(text);
  }
};

// A value of names ("skip", "all:5").
template <class T, auto parse_name, auto name_of>
struct Named {
  using Value = T;
  static Result<Value> parse(const TaskField& field, std::string_view text) { return parsed<parse_name>(field, text); }
  static std::string text(const Value& value) { return std::string(name_of(value)); }
  static FieldValue value(const Value& value) { return text(value); }
  static constexpr auto read = stored_name<parse_name>;
};

std::string_view overlap_name(Overlap overlap) { return to_string(overlap); }
std::string_view notify_format_name(NotifyFormat format) { return to_string(format); }
std::string catch_up_name(const CatchUp& catch_up) { return to_string(catch_up); }
std::string limit_number(std::int64_t value) { return std::to_string(value); }

// A resource limit; its parser's errors name the option. None: no limit.
// The schema's CHECK constraints keep a stored limit in its range.
template <auto parse_limit, auto format_limit>
struct Limit {
  using Value = std::optional<std::int64_t>;
  static Result<Value> parse(const TaskField&, std::string_view text) { return parse_limit(text); }
  static std::string text(const Value& value) { return value ? format_limit(*value) : ""; }
  static FieldValue value(const Value& value) { return value ? FieldValue(*value) : FieldValue(); }
  static constexpr auto read = stored_optional<stored_integer>;
};

// --keep-output's bytes.
struct OutputSize {
  using Value = std::int64_t;
  static Result<Value> parse(const TaskField&, std::string_view text) { return parse_keep_output(text); }
  static std::string text(Value value) { return format_byte_size(value); }
  static FieldValue value(Value value) { return value; }
  static constexpr auto read = stored_integer_from<Value, 0, max_keep_output>;
};

// --rdate's or --exdate's dates (days too when `days_allowed`), kept as
// their text.
template <bool days_allowed>
struct SetDates {
  using Value = std::vector<SetDate>;
  static Result<Value> parse(const TaskField& field, std::string_view text) {
    auto dates = parse_set_dates(text, days_allowed);
    if (!dates) return bad_option(field, dates.error().message);
    return dates;
  }
  static std::string text(const Value& value) { return set_dates_text(value); }
  static FieldValue value(const Value& value) { return text(value); }
  static Result<Value> read(const StoredCell& cell) { return parse_set_dates(cell.text(), days_allowed); }
};

// Calendars' names, comma-separated; kept sorted, once each.
struct CalendarNames {
  using Value = std::vector<std::string>;
  static Result<Value> names(std::string_view text) {
    Value names;
    for (std::size_t at = 0; !text.empty() && at <= text.size();) {
      auto comma = std::min(text.find(',', at), text.size());
      auto name = text.substr(at, comma - at);
      if (name.empty() || name.find_first_of(" \t\r\n") != std::string_view::npos)
        return fail(ErrorKind::bad_input, fmt::format("\"{}\" is not a calendar's name", name));
      names.emplace_back(name);
      at = comma + 1;
    }
    std::ranges::sort(names);
    names.erase(std::ranges::unique(names).begin(), names.end());
    return names;
  }
  static Result<Value> parse(const TaskField& field, std::string_view text) {
    auto value = names(text);
    if (!value) return bad_option(field, value.error().message);
    return value;
  }
  static std::string text(const Value& value) { return fmt::format("{}", fmt::join(value, ",")); }
  static FieldValue value(const Value& value) { return text(value); }
  static Result<Value> read(const StoredCell& cell) {
    auto text = TRY(stored_text(cell));
    return names(text);
  }
};

// The functions of a field at `At` with `Codec`, and what else `check`
// asks of its text once it is set.
using Check = Result<void> (*)(const TaskField&, std::string_view text, const Definition&, const Schedule&,
                               Time now);

template <class At, class Codec, Check check = nullptr>
struct Field {
  static Result<void> parse(const TaskField& field, std::string_view text, Definition& d, const Schedule& schedule,
                            Time now) {
    At::in(d) = TRY(Codec::parse(field, text));
    if constexpr (check != nullptr) TRY(check(field, text, d, schedule, now));
    return {};
  }
  static std::string text(const Definition& d) { return Codec::text(At::in(d)); }
  static bool same(const Definition& a, const Definition& b) { return At::in(a) == At::in(b); }
  static FieldValue value(const Definition& d) { return Codec::value(At::in(d)); }
  static Result<void> read(const StoredCell& cell, Definition& d) {
    At::in(d) = TRY(Codec::read(cell));
    return {};
  }
};

template <class At, class Codec, Check check = nullptr>
constexpr TaskField field(std::string_view name, std::string_view column, std::string_view help,
                          std::string_view initial, FileForm file_form, Shown shown, std::string_view label) {
  using F = Field<At, Codec, check>;
  return {name, column, help, initial, file_form, shown, label, F::parse, F::text, F::same, F::value, F::read};
}

Result<void> shorter_than_interval(const TaskField& field, std::string_view text, const Definition& d,
                                  const Schedule& schedule, Time now) {
  auto interval = interval_around(schedule, now);
  if (d.tolerance && interval && *d.tolerance >= *interval)
    return fail(ErrorKind::bad_input, fmt::format("{} {} must be shorter than the interval {}", field.flag(), text,
                                                  format_duration(*interval)));
  return {};
}

Result<void> host_id(const TaskField& field, std::string_view text, const Definition&, const Schedule&, Time) {
  if (text.empty()) return {};
  if (auto host = validate_host_id(text); !host) return bad_option(field, host.error().message);
  return {};
}

Result<void> run_as(const TaskField& field, std::string_view text, const Definition&, const Schedule&, Time) {
  if (text.empty()) return {};
  if (auto parsed = parse_run_as(text); !parsed) return bad_option(field, parsed.error().message);
  return {};
}

Result<void> absolute_path(const TaskField& field, std::string_view text, const Definition&, const Schedule&, Time) {
  if (auto valid = validate_env_file_path(text); !valid) return bad_option(field, valid.error().message);
  return {};
}

// --catch-up and --catch-up-window, which only a schedule of slots has.
Result<void> slot_grid(const TaskField&, std::string_view, const Definition& d, const Schedule& schedule, Time) {
  bool slots = has_slot_grid(schedule);
  if (!slots && (d.catch_up != CatchUp{} || d.catch_up_window)) {
    return fail(ErrorKind::bad_input,
                "--catch-up and --catch-up-window need a schedule of slots (--every without "
                "--after-finish, --cron or --rrule)");
  }
  return {};
}

// "all:5, window 1h" (show's "catch up" line).
// --rdate and --exdate, which only a schedule of slots has.
Result<void> dates_of_slots(const TaskField& field, std::string_view, const Definition& d, const Schedule& schedule,
                            Time) {
  if (!has_slot_grid(schedule) && (!d.rdate.empty() || !d.exdate.empty()))
    return fail(ErrorKind::bad_input, fmt::format("{} needs a schedule of slots (--every without --after-finish, "
                                                  "--cron or --rrule)",
                                                  field.flag()));
  return {};
}

// --skip-calendar and --only-calendar, which only a schedule of slots has.
Result<void> calendar_of_slots(const TaskField& field, std::string_view text, const Definition&,
                               const Schedule& schedule, Time) {
  if (!text.empty() && !has_slot_grid(schedule))
    return fail(ErrorKind::bad_input, fmt::format("{} needs a schedule of slots (--every without --after-finish, "
                                                  "--cron or --rrule)",
                                                  field.flag()));
  return {};
}

std::string catch_up_line(const Definition& d) {
  auto text = to_string(d.catch_up);
  if (d.catch_up_window) text += ", window " + format_duration(*d.catch_up_window);
  return text;
}

std::string limits_line(const Definition& d) { return describe_limits(d.limits); }

std::string when_exhausted_line(const Definition& d) {
  return d.disable_when_exhausted ? "disable the task until the next update" : "go on with the next planned slot";
}

constexpr TaskField with_show(TaskField field, std::string (*show)(const Definition&)) {
  field.show = show;
  return field;
}

using D = Definition;
using L = ResourceLimits;
using F = FileForm;
using S = Shown;

const std::array<TaskField, 28> fields{
    field<Of<&D::timeout>, Timebox>("timeout", "timeout",
                                    "Timebox of a run (default: half the interval; none: no timebox)", "", F::text,
                                    S::apart, ""),
    field<Of<&D::kill_grace>, Duration>("kill_grace", "kill_grace",
                                        "Time between SIGTERM and SIGKILL at the timebox (default 10s)", "10s", F::text,
                                        S::always, "kill grace"),
    field<Of<&D::tolerance>, OptionalDuration, shorter_than_interval>(
        "tolerance", "tolerance", "Drop-rule tolerance (default: 10% of the interval)", "", F::text, S::apart, ""),
    field<Of<&D::overlap>, Named<Overlap, parse_overlap, overlap_name>>(
        "overlap", "overlap", "When a run is still queued or running: skip, queue or replace", "skip", F::text,
        S::unless_initial, "overlap"),
    // Apart in show, which prints it before overlap.
    field<Of<&D::owner>, Text>("owner", "owner", "Who created the task (taskd rm --owner removes them all)", "",
                               F::text, S::apart, ""),
    field<Of<&D::group>, Text>("group", "group_name", "Group of the task (taskd pause --group pauses them all)", "",
                               F::text, S::unless_initial, "group"),
    field<Of<&D::priority>, Count<std::numeric_limits<int>::min()>>(
        "priority", "priority", "Higher runs first when runs queue up (default 0)", "0", F::whole_number,
        S::unless_initial, "priority"),
    field<Of<&D::notify>, Text>("notify", "notify",
                                "Shell command run when the task fails, recovers or is disabled ('' for none)", "",
                                F::text, S::unless_initial, "notify"),
    field<Of<&D::keep_runs>, Count<1>>("keep_runs", "keep_runs",
                                       "Finished runs the history keeps of the task (default 1000)", "1000",
                                       F::whole_number, S::unless_initial, "keep runs"),
    field<Of<&D::keep_output>, OutputSize>(
        "keep_output", "keep_output",
        "Output each run keeps, its head and its tail: bytes, or with K, M, G (default 1M)", "1M", F::limit_as_text,
        S::unless_initial, "keep output"),
    field<Of<&D::on_host>, Text, host_id>(
        "on_host", "on_host", "Run only on the taskd whose --host-id is ID, on a shared database ('' for any host)", "",
        F::text, S::unless_initial, "on host"),
    with_show(field<Of<&D::catch_up>, Named<CatchUp, parse_catch_up, catch_up_name>>(
                  "catch_up", "catch_up",
                  "Slots missed while no scheduler ran: latest (run the last), none, all or all:N (default latest)",
                  "latest", F::text, S::unless_initial, "catch up"),
              catch_up_line),
    field<Of<&D::catch_up_window>, OptionalDuration, slot_grid>(
        "catch_up_window", "catch_up_window", "Missed slots older than this are skipped ('' for no window)", "",
        F::text, S::unless_initial, "catch up"),
    with_show(field<LimitOf<&L::memory_max>, Limit<parse_memory_max, format_byte_size>>(
                  "memory_max", "memory_max",
                  "Memory limit of a run's cgroup: bytes, or with K, M, G, T (max for none); needs a cgroup", "",
                  F::limit_as_text, S::unless_initial, "limits"),
              limits_line),
    field<LimitOf<&L::cpu_weight>, Limit<parse_cpu_weight, limit_number>>(
        "cpu_weight", "cpu_weight", "CPU weight of a run's cgroup, 1 to 10000 ('' for the default 100); needs a cgroup",
        "", F::limit_as_number, S::unless_initial, "limits"),
    field<LimitOf<&L::tasks_max>, Limit<parse_tasks_max, limit_number>>(
        "tasks_max", "tasks_max", "Processes and threads a run may have at once (max for no limit); needs a cgroup", "",
        F::limit_as_number, S::unless_initial, "limits"),
    field<Of<&D::alert_after>, PositiveDurationOrNone>(
        "alert_after", "alert_after",
        "taskd check is CRITICAL when no run succeeded for this long (none: never, the default)", "", F::text,
        S::unless_initial, "alert after"),
    with_show(field<Of<&D::disable_when_exhausted>, Flag>(
                  "disable_when_exhausted", "disable_when_exhausted",
                  "When the retries run out, disable the task until the next update (default: its next planned slot "
                  "runs)",
                  "false", F::flag, S::unless_initial, "retries run out"),
              when_exhausted_line),
    field<Of<&D::user>, Text, run_as>(
        "user", "run_as",
        "Run as this user, NAME or NAME:GROUP (the scheduler must run as root; '' for the scheduler's own)", "",
        F::text, S::unless_initial, "user"),
    field<Of<&D::env_file>, Text, absolute_path>(
        "env_file", "env_file",
        "File of NAME=VALUE lines each run reads as it starts, an absolute path; its values stay out of the "
        "database ('' for none)",
        "", F::text, S::unless_initial, "env file"),
    field<Of<&D::mail_to>, MailTo>(
        "mail_to", "mail_to",
        "Mail these addresses (ADDR[,ADDR]) through sendmail when the task fails, recovers or is disabled ('' for "
        "none)",
        "", F::text, S::unless_initial, "mail to"),
    field<Of<&D::ping_url>, AlertUrl>(
        "ping_url", "ping_url",
        "POST URL/start when each run starts, then URL on success or URL/fail on failure ('' for none)", "",
        F::text, S::unless_initial, "ping url"),
    field<Of<&D::notify_url>, AlertUrl>(
        "notify_url", "notify_url",
        "POST what --notify is told to this http(s) URL when the task fails, recovers or is disabled ('' for none)",
        "", F::text, S::unless_initial, "notify url"),
    field<Of<&D::notify_format>, Named<NotifyFormat, parse_notify_format, notify_format_name>>(
        "notify_format", "notify_format",
        "What --notify-url posts: json (taskd's object) or slack ({\"text\": ...} for a chat webhook)", "json",
        F::text, S::unless_initial, "notify format"),
    field<Of<&D::rdate>, SetDates<false>, dates_of_slots>(
        "rdate", "rdate",
        "Extra slots T[,T...]: wall times in the task's zone (2026-12-24T09:00) or with an offset ('' for none)", "",
        F::text_list, S::unless_initial, "extra slots"),
    field<Of<&D::exdate>, SetDates<true>, dates_of_slots>(
        "exdate", "exdate",
        "Slots removed T[,T...]: wall times, times with an offset, or days (2026-12-25: all that day) ('' for none)",
        "", F::text_list, S::unless_initial, "removed slots"),
    field<Of<&D::skip_calendar>, CalendarNames, calendar_of_slots>(
        "skip_calendar", "skip_calendar",
        "No slot on the days of these calendars NAME[,NAME...] (taskd calendar add), in the task's zone ('' for none)",
        "", F::text_list, S::unless_initial, "skip calendars"),
    field<Of<&D::only_calendar>, Text, calendar_of_slots>(
        "only_calendar", "only_calendar",
        "Slots only on the days of this calendar (taskd calendar add), in the task's zone ('' for none)", "", F::text,
        S::unless_initial, "only calendar"),
};

}  // namespace

std::string TaskField::flag() const {
  std::string flag = "--" + std::string(name);
  std::ranges::replace(flag, '_', '-');
  return flag;
}

std::span<const TaskField> task_fields() { return fields; }

const TaskField* task_field_of_column(std::string_view column) {
  auto found = std::ranges::find(fields, column, &TaskField::column);
  return found == fields.end() ? nullptr : &*found;
}

}  // namespace taskd::core
