#include <doctest/doctest.h>

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
