#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "exec/watchdog.hpp"

using taskd::exec::WatchedRun;
using taskd::exec::WatchedRuns;

namespace {

const std::string token_a = "TASKD_ATTEMPT_UID=0123456789abcdef0123456789abcdef";
const std::string token_b = "TASKD_ATTEMPT_UID=fedcba9876543210fedcba9876543210";

std::vector<pid_t> leaders(const WatchedRuns& runs) {
  std::vector<pid_t> out;
  for (const auto& run : runs.live()) out.push_back(run.leader);
  return out;
}

}  // namespace

TEST_CASE("the watchdog's table lists the runs recorded and not forgotten, with their groups and tokens") {
  auto runs = std::make_unique<WatchedRuns>();
  CHECK(runs->live().empty());
  auto a = runs->add(100, 7, token_a);
  auto b = runs->add(200, 8, token_b);
  REQUIRE(a);
  REQUIRE(b);
  auto live = runs->live();
  REQUIRE(live.size() == 2);
  CHECK((live[0].leader == 100 && live[0].start_ticks == 7 && live[0].token == token_a));
  CHECK((live[1].leader == 200 && live[1].start_ticks == 8 && live[1].token == token_b));
  runs->remove(*a);
  CHECK(leaders(*runs) == std::vector<pid_t>{200});
  runs->remove(*b);
  CHECK(runs->live().empty());
}

TEST_CASE("a forgotten entry serves the next run, and a full table takes no more until one is forgotten") {
  auto runs = std::make_unique<WatchedRuns>();
  std::vector<std::size_t> entries;
  for (std::size_t i = 0; i < WatchedRuns::capacity; ++i) {
    auto entry = runs->add(static_cast<pid_t>(i + 2), 1, token_a);
    REQUIRE(entry);
    entries.push_back(*entry);
  }
  CHECK_FALSE(runs->add(99999, 1, token_b));
  runs->remove(entries[5]);
  CHECK(runs->add(99999, 1, token_b) == entries[5]);
  CHECK(runs->live().size() == WatchedRuns::capacity);
  CHECK_FALSE(runs->add(99998, 1, token_b));
}

TEST_CASE("a token longer than an entry holds is not kept, and its group still is") {
  auto runs = std::make_unique<WatchedRuns>();
  std::string longest(WatchedRuns::token_capacity, 'x');
  REQUIRE(runs->add(300, 1, longest));
  REQUIRE(runs->add(301, 1, longest + "x"));
  auto live = runs->live();
  REQUIRE(live.size() == 2);
  CHECK(live[0].token == longest);
  CHECK((live[1].leader == 301 && live[1].token.empty()));
}

TEST_CASE("the watchdog's table says whether taskd said goodbye") {
  auto runs = std::make_unique<WatchedRuns>();
  CHECK_FALSE(runs->said_goodbye());
  runs->say_goodbye();
  CHECK(runs->said_goodbye());
}

TEST_CASE("a run past its backstop is handed out once, with its cgroup, and not once renewed or forgotten") {
  using namespace std::chrono_literals;
  auto runs = std::make_unique<WatchedRuns>();
  taskd::exec::SteadyTime t0{10s};
  auto held = runs->add(100, 7, token_a, "run-3");
  auto renewed = runs->add(200, 8, token_b);
  auto forgotten = runs->add(300, 9, token_b);
  auto unfenced = runs->add(400, 9, token_b);
  REQUIRE((held && renewed && forgotten && unfenced));
  for (auto entry : {*held, *renewed, *forgotten}) runs->set_backstop(entry, t0);
  CHECK(runs->take_overdue(t0 - 1ns).empty());
  runs->set_backstop(*renewed, t0 + 2s);
  runs->remove(*forgotten);
  auto overdue = runs->take_overdue(t0);
  REQUIRE(overdue.size() == 1);
  CHECK((overdue[0].leader == 100 && overdue[0].start_ticks == 7 && overdue[0].token == token_a &&
         overdue[0].cgroup == "run-3"));
  CHECK(runs->take_overdue(t0 + 1s).empty());  // handed out once
  auto later = runs->take_overdue(t0 + 2s);
  REQUIRE(later.size() == 1);
  CHECK((later[0].leader == 200 && later[0].cgroup.empty()));
}

TEST_CASE("a forgotten entry's backstop does not follow it to its next run") {
  using namespace std::chrono_literals;
  auto runs = std::make_unique<WatchedRuns>();
  auto first = runs->add(100, 7, token_a);
  REQUIRE(first);
  runs->set_backstop(*first, taskd::exec::SteadyTime{1s});
  runs->remove(*first);
  REQUIRE(runs->add(101, 8, token_a) == first);
  CHECK(runs->take_overdue(taskd::exec::SteadyTime{5s}).empty());
}
