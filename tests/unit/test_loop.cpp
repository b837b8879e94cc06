#include <doctest/doctest.h>

#include "sched/crash_point.hpp"
#include "sched/log.hpp"
#include "sched/loop.hpp"
#include "test_helpers.hpp"

using namespace taskd;
using namespace std::chrono_literals;
using test::at;

namespace {
// A heartbeat not due before any other wake-up of these cases.
const core::Time far = at(23, 0);
}  // namespace

TEST_CASE("with nothing upcoming the loop sleeps for the tick bound") {
  CHECK(sched::next_pass_at(at(10, 0), {}, far, 30s, sched::Role::tick_and_work) == at(10, 0, 30));
}

TEST_CASE("the loop wakes at the next due task or claimable run, whichever is first") {
  store::Upcoming upcoming{at(10, 0, 7), at(10, 0, 4)};
  CHECK(sched::next_pass_at(at(10, 0), upcoming, far, 30s, sched::Role::tick_and_work) == at(10, 0, 4));
  upcoming.next_claimable = at(10, 0, 9);
  CHECK(sched::next_pass_at(at(10, 0), upcoming, far, 30s, sched::Role::tick_and_work) == at(10, 0, 7));
}

TEST_CASE("a due time beyond the tick bound waits for the bound") {
  store::Upcoming upcoming{at(11, 0), std::nullopt};
  CHECK(sched::next_pass_at(at(10, 0), upcoming, far, 30s, sched::Role::tick_and_work) == at(10, 0, 30));
}

TEST_CASE("a worker does not wake for due tasks, which it does not enqueue") {
  store::Upcoming upcoming{at(10, 0, 2), at(10, 0, 20)};
  CHECK(sched::next_pass_at(at(10, 0), upcoming, far, 30s, sched::Role::work) == at(10, 0, 20));
}

TEST_CASE("times already past do not make the loop spin") {
  // A run claimable now that the last pass left queued waits for a slot to
  // free up (a child's exit wakes the loop), not for a busy loop.
  store::Upcoming upcoming{at(9, 59), at(10, 0)};
  CHECK(sched::next_pass_at(at(10, 0), upcoming, far, 30s, sched::Role::tick_and_work) == at(10, 0, 30));
}

TEST_CASE("the loop wakes for its heartbeat when nothing comes sooner") {
  store::Upcoming upcoming{at(10, 0, 20), std::nullopt};
  CHECK(sched::next_pass_at(at(10, 0), upcoming, at(10, 0, 10), 30s, sched::Role::work) == at(10, 0, 10));
  CHECK(sched::next_pass_at(at(10, 0), upcoming, at(10, 0, 10), 30s, sched::Role::tick_and_work) == at(10, 0, 10));
  CHECK(sched::next_pass_at(at(10, 0), upcoming, at(10, 0, 25), 30s, sched::Role::tick_and_work) == at(10, 0, 20));
}

TEST_CASE("an overdue heartbeat makes the loop pass at once") {
  CHECK(sched::next_pass_at(at(10, 0), {}, at(9, 59, 50), 30s, sched::Role::work) == at(10, 0));
}

TEST_CASE("TASKD_CRASH_AT names a crash point and optionally on which pass") {
  CHECK(sched::parse_crash_switch(""));
  CHECK(sched::parse_crash_switch("enqueue"));
  CHECK(sched::parse_crash_switch("after-claim:3"));
  CHECK(sched::parse_crash_switch("after-spawn:1"));
  CHECK(sched::parse_crash_switch("after-exit:12"));
  for (const char* bad : {"after-lunch", "enqueue:0", "enqueue:", "enqueue:2x", "after-exit:-1", ":3"}) {
    auto parsed = sched::parse_crash_switch(bad);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().kind == core::ErrorKind::usage);
    CHECK(parsed.error().message.find(bad) != std::string::npos);
  }
}

TEST_CASE("a logfmt line has the time, the level, the event and the fields in order") {
  auto line = sched::logfmt_line(at(1, 0, 0, 123), sched::LogLevel::info, "run.finished",
                                 {{"task", "backup"}, {"run", "12"}, {"status", "succeeded"}, {"duration", "1.234"}});
  CHECK(line == "ts=2026-11-21T01:00:00.123Z level=info event=run.finished task=backup run=12 status=succeeded "
                "duration=1.234");
}

TEST_CASE("logfmt values with spaces, quotes, equals signs or newlines are quoted and escaped") {
  auto line = sched::logfmt_line(at(1, 0), sched::LogLevel::warn, "run.finished",
                                 {{"reason", "exit code 3: \"bad\" a=b\\c\nnext"}, {"empty", ""}});
  CHECK(line == "ts=2026-11-21T01:00:00.000Z level=warn event=run.finished "
                "reason=\"exit code 3: \\\"bad\\\" a=b\\\\c\\nnext\" empty=\"\"");
}

TEST_CASE("logfmt values never carry a control character or a byte that is not UTF-8 to the log") {
  auto line = sched::logfmt_line(at(1, 0), sched::LogLevel::warn, "run.finished",
                                 {{"reason", "\x1b]0;owned\x07\x1b[2J"}, {"task", "caf\xc3\xa9"}, {"owner", "o\xff"}});
  CHECK(line ==
        "ts=2026-11-21T01:00:00.000Z level=warn event=run.finished "
        "reason=\"\\x1b]0;owned\\x07\\x1b[2J\" task=caf\xc3\xa9 owner=\"o\\xff\"");
}

TEST_CASE("log levels are parsed by name; others are a usage error") {
  CHECK(sched::parse_log_level("debug") == sched::LogLevel::debug);
  CHECK(sched::parse_log_level("error") == sched::LogLevel::error);
  auto bad = sched::parse_log_level("verbose");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().kind == core::ErrorKind::usage);
  CHECK(bad.error().message.find("verbose") != std::string::npos);
}
