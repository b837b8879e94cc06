// Bulk task generator for the benchmarks: adds COUNT tasks to a database in
// one transaction, through the same definition checks and store calls as
// `taskd add`, so the rows are the ones `add` writes (a million in seconds;
// a million `taskd add` processes would take hours).
//
// Usage: make_tasks DATABASE COUNT [ACTIVE [RUNS]]
// The COUNT tasks (bench-0000000 …) cycle through a mix of --every and
// --cron schedules running /bin/true and are planned from a day after now,
// so none comes due while a benchmark runs. The ACTIVE tasks (active-0000 …)
// run /bin/true --every 10s, planned from now as `taskd add` plans them.
// RUNS gives each of the COUNT tasks that many finished runs in its
// history, one a minute up to now, every tenth failed: a history written
// in one statement (as a year of runs would leave it, without the year).
#include <array>
#include <charconv>
#include <cstdio>
#include <fmt/format.h>
#include <string_view>

#include "cli/task_options.hpp"
#include "core/policy.hpp"
#include "sched/clock.hpp"
#include "store/sqlite.hpp"
#include "store/tasks.hpp"

namespace {

using namespace taskd;

struct ScheduleMix {
  std::string_view every;
  std::string_view cron;
  std::string_view tz;
};

// What a real table of tasks looks like: polls, nightly jobs, reports.
constexpr std::array<ScheduleMix, 8> schedule_mix{{
    {"1h", "", ""},
    {"", "*/30 * * * *", "UTC"},
    {"6h", "", ""},
    {"", "0 3 * * *", "Europe/Berlin"},
    {"1d", "", ""},
    {"", "15 4 * * MON", "America/New_York"},
    {"7d", "", ""},
    {"", "H H 1 * *", "UTC"},
}};

constexpr auto plan_delay = std::chrono::hours(24);

cli::TaskOptions options_for(std::string name, const ScheduleMix& mix) {
  cli::TaskOptions options;
  options.name = std::move(name);
  options.command = {"/bin/true"};
  options.schedule.every = mix.every;
  options.schedule.cron = mix.cron;
  options.schedule.tz = mix.tz;
  return options;
}

// Adds one task as `taskd add` does, its first run planned from `plan_from`.
core::Result<void> add_task(store::Database& db, const cli::TaskOptions& options, core::Time now,
                            core::Time plan_from) {
  auto task = TRY(cli::build_task(options, now));
  TRY(store::insert_task(db, task.definition, core::on_create(task.schedule.value(), plan_from, false), now));
  return {};
}

core::Result<void> add_tasks(store::Database& db, long count, long active, core::Time now) {
  return store::write(db, [&]() -> core::Result<void> {
    for (long i = 0; i < count; ++i) {
      auto options = options_for(fmt::format("bench-{:07}", i), schedule_mix[i % schedule_mix.size()]);
      if (auto added = add_task(db, options, now, now + plan_delay); !added) return added;
    }
    for (long i = 0; i < active; ++i) {
      auto options = options_for(fmt::format("active-{:04}", i), {"10s", "", ""});
      if (auto added = add_task(db, options, now, now); !added) return added;
    }
    return {};
  });
}

// The history of RUNS runs per task, oldest first and tasks interleaved,
// as a scheduler records them; the schema's triggers count them as they go in.
constexpr const char* history_sql = R"(
WITH RECURSIVE minute(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM minute WHERE i + 1 < ?1)
INSERT INTO runs (task_id, status, trigger, scheduled_at, enqueued_at, not_before, started_at, finished_at,
                  exit_code, attempt_no, attempt_uid, run_index, reason, output)
SELECT t.id, CASE WHEN (t.id + m.i) % 10 = 0 THEN 'failed' ELSE 'succeeded' END, 'schedule',
       ?2 - (?1 - m.i) * 60000, ?2 - (?1 - m.i) * 60000, ?2 - (?1 - m.i) * 60000,
       ?2 - (?1 - m.i) * 60000 + t.id % 50, ?2 - (?1 - m.i) * 60000 + 900,
       CASE WHEN (t.id + m.i) % 10 = 0 THEN 1 ELSE 0 END, 1, printf('%08x-%d', t.id, m.i), m.i + 1,
       CASE WHEN (t.id + m.i) % 10 = 0 THEN 'exit 1' ELSE '' END, CAST('ok' AS BLOB)
FROM minute m CROSS JOIN tasks t WHERE t.name LIKE 'bench-%' ORDER BY m.i, t.id
)";

core::Result<void> add_history(store::Database& db, long runs, core::Time now) {
  return store::write(db, [&]() -> core::Result<void> {
    SQLite::Statement insert(store::sqlite_handle(db), history_sql);
    insert.bind(1, static_cast<std::int64_t>(runs));
    insert.bind(2, core::to_unix_ms(now));
    insert.exec();
    return {};
  });
}

bool parse_count(const char* text, long& count) {
  std::string_view view(text);
  auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), count);
  return error == std::errc() && end == view.data() + view.size() && count >= 0;
}

}  // namespace

int main(int argc, char** argv) {
  long count = 0;
  long active = 0;
  long runs = 0;
  if (argc < 3 || argc > 5 || !parse_count(argv[2], count) || (argc >= 4 && !parse_count(argv[3], active)) ||
      (argc == 5 && !parse_count(argv[4], runs))) {
    std::fputs("usage: make_tasks DATABASE COUNT [ACTIVE [RUNS]]\n", stderr);
    return 2;
  }
  auto db = store::Database::open(argv[1]);
  if (!db) {
    fmt::print(stderr, "make_tasks: {}\n", db.error().message);
    return 1;
  }
  core::Time now = sched::SystemClock{}.now();
  if (auto added = add_tasks(*db, count, active, now); !added) {
    fmt::print(stderr, "make_tasks: {}\n", added.error().message);
    return 1;
  }
  if (runs == 0) return 0;
  if (auto added = add_history(*db, runs, now); !added) {
    fmt::print(stderr, "make_tasks: {}\n", added.error().message);
    return 1;
  }
  return 0;
}
