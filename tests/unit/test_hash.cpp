#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/hash.hpp"

using namespace taskd::core;
using namespace std::chrono_literals;

TEST_CASE("the stable hash never changes between releases") {
  // Pinned values: a change here moves every user's phases and jitter.
  CHECK(stable_hash("") == 14087677454934409008ULL);
  CHECK(stable_hash("backup") == 18269996893647234888ULL);
  CHECK(default_phase("backup", 3600s) == Millis{static_cast<long>(stable_hash("backup", 0x7068617365) % 3'600'000)});
  CHECK(default_phase("backup", 3600s) == 540364ms);
}

TEST_CASE("the salt separates the uses of one name") { CHECK(stable_hash("backup", 1) != stable_hash("backup", 2)); }

TEST_CASE("the default phase lies within the interval") {
  for (auto interval : {1s, 7s, 60s, 3600s, 86400s}) {
    auto phase = default_phase("task-" + std::to_string(interval.count()), interval);
    CHECK(phase >= 0s);
    CHECK(phase < interval);
  }
  CHECK(default_phase("x", 0s) == 0s);
}

TEST_CASE("10 000 tasks added at once spread evenly over their interval") {
  std::vector<int> per_second(60, 0);
  for (int i = 0; i < 10000; ++i)
    per_second[std::chrono::floor<Seconds>(default_phase("task-" + std::to_string(i), 60s)).count()] += 1;
  double mean = 10000.0 / 60.0;
  int peak = *std::max_element(per_second.begin(), per_second.end());
  CHECK(peak / mean <= 1.3);
}

TEST_CASE("tasks of one interval spread within each second too") {
  // 100 tasks every second: whole-second phases would start them all at once.
  std::vector<int> per_10ms(100, 0);
  for (int i = 0; i < 1000; ++i) per_10ms[default_phase("t" + std::to_string(i), 1s).count() / 10] += 1;
  CHECK(*std::max_element(per_10ms.begin(), per_10ms.end()) <= 25);
  CHECK(std::count(per_10ms.begin(), per_10ms.end(), 0) == 0);
}
