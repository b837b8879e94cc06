#include "store/calendars.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>

#include "store/columns.hpp"
#include "store/task_row.hpp"

namespace taskd::store {
namespace {

std::string day_text(const std::vector<core::CalendarDate>& dates, bool last) {
  if (dates.empty()) return "";
  return date::format("%F", last ? dates.back().day : dates.front().day);
}

}  // namespace

core::Result<void> write_calendar(Database& db, std::string_view name, const std::vector<core::CalendarDate>& dates,
                                  IfCalendarExists if_exists, core::Time now) {
  return guarded(db, [&]() -> core::Result<void> {
    auto exists = db.prepare("SELECT count(*) FROM calendars WHERE name = ?");
    Binder(exists).text(name);
    if (exists.single_int64() > 0 && if_exists == IfCalendarExists::refuse)
      return core::fail(
          core::ErrorKind::bad_input,
          fmt::format("calendar add: a calendar named \"{}\" exists (--replace to replace its days)", name));
    auto upsert = db.prepare(
        "INSERT INTO calendars (name, dates, days, first_day, last_day, updated_at) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (name) DO UPDATE SET dates = excluded.dates, days = excluded.days, "
        "first_day = excluded.first_day, last_day = excluded.last_day, updated_at = excluded.updated_at");
    Binder b(upsert);
    b.text(name);
    b.text(core::calendar_dates_text(dates));
    b.int64(static_cast<std::int64_t>(dates.size()));
    b.text(day_text(dates, false));
    b.text(day_text(dates, true));
    b.time(now);
    upsert.exec();
    return {};
  });
}

core::Result<std::vector<CalendarSummary>> list_calendars(Database& db) {
  return guarded(db, [&]() -> core::Result<std::vector<CalendarSummary>> {
    auto query = db.prepare("SELECT name, days, first_day, last_day FROM calendars ORDER BY name");
    std::vector<CalendarSummary> calendars;
    while (query.step()) {
      Columns c(query);
      CalendarSummary calendar;
      calendar.name = c.text();
      calendar.days = c.int64();
      calendar.first_day = c.text();
      calendar.last_day = c.text();
      calendars.push_back(std::move(calendar));
    }
    return calendars;
  });
}

core::Result<std::optional<std::vector<core::CalendarDate>>> read_calendar(Database& db, std::string_view name) {
  auto text = TRY(guarded(db, [&]() -> core::Result<std::optional<std::string>> {
    auto query = db.cached("SELECT dates FROM calendars WHERE name = ?");
    Binder(query).text(name);
    if (!query.step()) return std::nullopt;
    return Columns(query).text();
  }));
  if (!text) return std::nullopt;
  auto dates = core::parse_calendar_dates(*text, fmt::format("calendar \"{}\" in the database", name));
  if (!dates) return std::unexpected(dates.error());
  return std::optional(std::move(*dates));
}

core::Result<std::vector<core::NamedCalendar>> read_calendars(Database& db, const std::vector<std::string>& names) {
  std::vector<core::NamedCalendar> calendars;
  for (const auto& name : names) {
    auto dates = TRY(read_calendar(db, name));
    if (dates) calendars.push_back({name, std::move(*dates)});
  }
  return calendars;
}

core::Result<void> remove_calendar(Database& db, std::string_view name) {
  return guarded(db, [&]() -> core::Result<void> {
    auto exists = db.prepare("SELECT count(*) FROM calendars WHERE name = ?");
    Binder(exists).text(name);
    if (exists.single_int64() == 0)
      return core::fail(core::ErrorKind::bad_input,
                        fmt::format("calendar rm: no calendar named \"{}\" (see taskd calendar list)", name));
    auto remove = db.prepare("DELETE FROM calendars WHERE name = ?");
    Binder(remove).text(name);
    remove.exec();
    return {};
  });
}

std::string calendar_days_digest(std::string_view days) {
  if (days.empty()) return "";
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(days.data(), days.size(), digest, &size, EVP_sha256(), nullptr) != 1)
    throw Failure(FailureKind::internal, "SHA-256 of a task's calendar days failed (OpenSSL)");
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) fmt::format_to(std::back_inserter(hex), "{:02x}", digest[i]);
  return hex;
}

core::Result<std::string> save_calendar_days(Database& db, std::string_view days) {
  return guarded(db, [&]() -> core::Result<std::string> {
    auto digest = calendar_days_digest(days);
    if (digest.empty()) return digest;
    static const std::string sql =
        "INSERT INTO calendar_day_sets (digest, days) VALUES (?, ?) ON CONFLICT (digest) DO NOTHING";
    auto keep = db.cached(sql);
    Binder b(keep);
    b.text(digest);
    b.text(days);
    keep.exec();
    return digest;
  });
}

core::Result<void> forget_unused_calendar_days(Database& db) {
  return guarded(db, [&]() -> core::Result<void> {
    static const std::string sql =
        "DELETE FROM calendar_day_sets WHERE NOT EXISTS (SELECT 1 FROM tasks WHERE calendar_days_digest = "
        "calendar_day_sets.digest AND calendar_days_digest <> '')";
    db.cached(sql).exec();
    return {};
  });
}

core::Result<std::vector<StoredTask>> tasks_naming_calendar(Database& db, std::string_view name) {
  return guarded(db, [&]() -> core::Result<std::vector<StoredTask>> {
    auto query = db.prepare(fmt::format(
        "SELECT {} FROM tasks WHERE only_calendar = ? OR (',' || skip_calendar || ',') LIKE ? ORDER BY name",
        task_columns()));
    Binder b(query);
    b.text(name);
    b.text(fmt::format("%,{},%", name));
    std::vector<StoredTask> tasks;
    while (query.step()) tasks.push_back(read_task(query.query()));
    return tasks;
  });
}

}  // namespace taskd::store
