#include <doctest/doctest.h>

#include <utility>

#include "core/zone.hpp"

using namespace taskd::core;
using namespace std::chrono;

namespace {
Time utc(int y, unsigned m, unsigned d, int hh, int mm) {
  return sys_days{year{y} / month{m} / day{d}} + hours{hh} + minutes{mm};
}
LocalTime local(int y, unsigned m, unsigned d, int hh, int mm) {
  return date::local_days{date::year{y} / date::month{m} / date::day{d}} + hours{hh} + minutes{mm};
}
}  // namespace

TEST_CASE("zones are found by IANA name; unknown names are bad input") {
  CHECK(zone_name(find_zone("Europe/Berlin").value()) == "Europe/Berlin");
  CHECK(find_zone("").has_value());
  auto bad = find_zone("Mars/Olympus");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().kind == ErrorKind::bad_input);
  CHECK(bad.error().message.find("Mars/Olympus") != std::string::npos);
}

TEST_CASE("a wall-clock time in a spring-forward gap resolves to the end of the gap") {
  auto berlin = find_zone("Europe/Berlin").value();
  auto gap = resolve_local(berlin, local(2026, 3, 29, 2, 30));
  CHECK(gap.kind == LocalKind::skipped);
  CHECK(gap.first == utc(2026, 3, 29, 1, 0));  // 03:00 CEST
}

TEST_CASE("a wall-clock time in a repeated hour names two instants, earlier first") {
  auto new_york = find_zone("America/New_York").value();
  auto twice = resolve_local(new_york, local(2026, 11, 1, 1, 30));
  CHECK(twice.kind == LocalKind::repeated);
  CHECK(twice.first == utc(2026, 11, 1, 5, 30));   // 01:30 EDT
  CHECK(twice.second == utc(2026, 11, 1, 6, 30));  // 01:30 EST
}

TEST_CASE("Lord Howe shifts by 30 minutes, in the listed years and after them") {
  auto lord_howe = find_zone("Australia/Lord_Howe").value();
  // 02:00 local jumps to 02:30 on the first Sunday of October.
  for (auto [in_gap, gap_end] : {std::pair{local(2026, 10, 4, 2, 15), utc(2026, 10, 3, 15, 30)},
                                 std::pair{local(2040, 10, 7, 2, 15), utc(2040, 10, 6, 15, 30)}}) {
    auto gap = resolve_local(lord_howe, in_gap);
    CHECK(gap.kind == LocalKind::skipped);
    CHECK(gap.first == gap_end);
    CHECK(to_local(lord_howe, gap.first) == in_gap + minutes{15});
    CHECK(resolve_local(lord_howe, in_gap + minutes{15}).kind == LocalKind::unique);
  }
  CHECK(to_local(lord_howe, utc(2040, 7, 1, 12, 0)) == local(2040, 7, 1, 22, 30));
  CHECK(to_local(lord_howe, utc(2100, 1, 1, 12, 0)) == local(2100, 1, 1, 23, 0));
}

TEST_CASE("a zone without DST: every wall-clock time names one instant, also after the listed years") {
  auto tokyo = find_zone("Asia/Tokyo").value();
  for (int y : {2026, 2100}) {
    auto noon = resolve_local(tokyo, local(y, 3, 29, 12, 0));
    CHECK(noon.kind == LocalKind::unique);
    CHECK(noon.first == utc(y, 3, 29, 3, 0));
    CHECK(to_local(tokyo, noon.first) == local(y, 3, 29, 12, 0));
  }
}

// date-tz alone keeps the offset of the last transition a TZif file lists
// (2037 in Debian's files) forever; the file's closing rule tells the rest.
TEST_CASE("after the transitions the TZif file lists, Berlin follows its closing rule") {
  auto berlin = find_zone("Europe/Berlin").value();
  CHECK(to_local(berlin, utc(2040, 7, 1, 12, 0)) == local(2040, 7, 1, 14, 0));
  CHECK(to_local(berlin, utc(2040, 1, 1, 12, 0)) == local(2040, 1, 1, 13, 0));
  CHECK(to_local(berlin, utc(2100, 7, 1, 12, 0)) == local(2100, 7, 1, 14, 0));
  auto gap = resolve_local(berlin, local(2040, 3, 25, 2, 30));
  CHECK(gap.kind == LocalKind::skipped);
  CHECK(gap.first == utc(2040, 3, 25, 1, 0));
  // Where the listed transitions end (2037-10-25) the rule takes over seamlessly.
  auto winter = offset_period(berlin, floor<seconds>(utc(2037, 12, 1, 0, 0)));
  CHECK(winter.begin == utc(2037, 10, 25, 1, 0));
  CHECK(winter.end == utc(2038, 3, 28, 1, 0));
  CHECK(winter.offset == 1h);
}

TEST_CASE("after the listed transitions, New York's repeated hour still comes twice") {
  auto new_york = find_zone("America/New_York").value();
  CHECK(to_local(new_york, utc(2040, 7, 1, 12, 0)) == local(2040, 7, 1, 8, 0));
  auto twice = resolve_local(new_york, local(2100, 11, 7, 1, 30));
  CHECK(twice.kind == LocalKind::repeated);
  CHECK(twice.first == utc(2100, 11, 7, 5, 30));
  CHECK(twice.second == utc(2100, 11, 7, 6, 30));
}
