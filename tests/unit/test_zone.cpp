#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "core/zone.hpp"

using namespace taskd::core;
using namespace std::chrono;
using namespace std::string_view_literals;

namespace {
Time utc(int y, unsigned m, unsigned d, int hh, int mm) {
  return sys_days{year{y} / month{m} / day{d}} + hours{hh} + minutes{mm};
}
LocalTime local(int y, unsigned m, unsigned d, int hh, int mm) {
  return date::local_days{date::year{y} / date::month{m} / date::day{d}} + hours{hh} + minutes{mm};
}
// Sets TZ (or unsets it, for none) for the life of the object.
class TzVariable {
 public:
  explicit TzVariable(const char* value) {
    if (const char* old = std::getenv("TZ")) saved_ = old;
    value ? setenv("TZ", value, 1) : unsetenv("TZ");
  }
  ~TzVariable() { saved_ ? setenv("TZ", saved_->c_str(), 1) : unsetenv("TZ"); }
  TzVariable(const TzVariable&) = delete;
  TzVariable& operator=(const TzVariable&) = delete;

 private:
  std::optional<std::string> saved_;
};

std::string system_zone_name(const char* tz) {
  TzVariable variable(tz);
  auto zone = find_zone("");
  REQUIRE(zone);
  return zone_name(*zone);
}

std::string refusal(std::string_view name) {
  auto zone = find_zone(name);
  REQUIRE_FALSE(zone);
  CHECK(zone.error().kind == ErrorKind::bad_input);
  return zone.error().message;
}

std::string unknown(std::string_view name) {
  return "unknown time zone \"" + std::string(name) + "\" (use an IANA name such as Europe/Berlin or UTC)";
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

TEST_CASE("a zone keeps the name it was found by, links included") {
  for (auto name : {"UTC", "Etc/UTC", "US/Eastern", "America/Argentina/Buenos_Aires", "Etc/GMT+5"})
    CHECK(zone_name(find_zone(name).value()) == name);
  CHECK(find_zone("Europe/Berlin").value() == find_zone("Europe/Berlin").value());
}

TEST_CASE("a zone name never leaves the zoneinfo directory, and names no other file") {
  for (auto name : {"../zoneinfo/Europe/Berlin"sv, "Europe/../Europe/Berlin"sv, "/usr/share/zoneinfo/UTC"sv,
                    "Europe//Berlin"sv, "Europe/Berlin/"sv, ".hidden"sv, "Europe"sv, "tzdata.zi"sv, "zone1970.tab"sv,
                    "Europe/Berlin\0"sv, "Europe/Berlin "sv, "Mars/Olympus"sv})
    CHECK(refusal(name) == unknown(name));
}

TEST_CASE("a zone file taskd cannot read is refused, naming the file and the problem") {
  CHECK(refusal("right/UTC") ==
        "time zone \"right/UTC\": /usr/share/zoneinfo/right/UTC: leap-second corrections (a \"right/\" zone): taskd "
        "counts POSIX seconds, without them");
}

TEST_CASE("the system's zone is the one TZ names, as glibc reads it") {
  CHECK(system_zone_name("Asia/Tokyo") == "Asia/Tokyo");
  CHECK(system_zone_name(":Asia/Tokyo") == "Asia/Tokyo");
  CHECK(system_zone_name("/usr/share/zoneinfo/Asia/Tokyo") == "Asia/Tokyo");
  CHECK(system_zone_name(":/usr/share/zoneinfo/US/Eastern") == "US/Eastern");
}

TEST_CASE("without TZ, or with TZ empty or :/etc/localtime, the system's zone is the one it is set to") {
  const auto configured = system_zone_name(nullptr);
  CHECK(system_zone_name("") == configured);
  CHECK(system_zone_name(":/etc/localtime") == configured);
  CHECK(system_zone_name("/etc/localtime") == configured);
}

TEST_CASE("a TZ that names no zone is an error, not a silent fallback") {
  for (const char* tz : {"Mars/Olympus", ":Mars/Olympus", "CET-1CEST,M3.5.0,M10.5.0/3", "/etc/passwd", "../UTC"}) {
    TzVariable variable(tz);
    auto zone = find_zone("");
    REQUIRE_FALSE(zone);
    CHECK(zone.error().kind == ErrorKind::bad_input);
    CHECK(zone.error().message.starts_with("TZ=\"" + std::string(tz) + "\": unknown time zone \""));
  }
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

// A reader of the listed transitions alone would keep the offset of the last
// one (2037 in Debian's files) forever; the file's closing rule tells the rest.
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

TEST_CASE("times shown to people: local, with the offset where it is not the usual one, or RFC 3339 UTC") {
  auto berlin = find_zone("Europe/Berlin").value();
  auto winter = time_style(berlin, utc(2026, 3, 28, 12, 0));
  CHECK(show_time(utc(2026, 3, 28, 14, 0), winter) == "2026-03-28 15:00:00");
  CHECK(show_time(utc(2026, 3, 29, 3, 0), winter) == "2026-03-29 05:00:00+02:00");
  CHECK(show_time(utc(2026, 3, 29, 3, 0) + 137ms, winter, Precision::milliseconds) ==
        "2026-03-29 05:00:00.137+02:00");
  auto summer = time_style(berlin, utc(2026, 7, 1, 0, 0));
  CHECK(show_time(utc(2026, 12, 1, 0, 0), summer) == "2026-12-01 01:00:00+01:00");
  auto kolkata = time_style(find_zone("Asia/Kolkata").value(), utc(2026, 7, 1, 0, 0));
  CHECK(show_time(utc(2026, 7, 1, 0, 0), kolkata) == "2026-07-01 05:30:00");
  auto st_johns = find_zone("America/St_Johns").value();
  CHECK(show_time(utc(2026, 1, 1, 0, 0), time_style(st_johns, utc(2026, 7, 1, 0, 0))) == "2025-12-31 20:30:00-03:30");
  CHECK(show_time(utc(2026, 3, 29, 3, 0), time_style(nullptr, utc(2026, 3, 28, 12, 0))) == "2026-03-29T03:00:00Z");
}

TEST_CASE("the clock's periods start at midnight and follow each other; a day or more starts at midnight") {
  auto berlin = find_zone("Europe/Berlin").value();
  auto t = utc(2026, 11, 21, 13, 10) + 20s;  // 14:10:20 in Berlin
  CHECK(clock_period_start(t, 15min, berlin) == utc(2026, 11, 21, 13, 0));
  CHECK(clock_period_start(t, 1h, berlin) == utc(2026, 11, 21, 13, 0));
  CHECK(clock_period_start(t, 12h, berlin) == utc(2026, 11, 21, 11, 0));
  CHECK(clock_period_start(t, hours{48}, berlin) == utc(2026, 11, 20, 23, 0));
  CHECK(clock_period_start(t, 7min, nullptr) == utc(2026, 11, 21, 13, 4));  // 112 periods after midnight
  CHECK(clock_period_start(t, 1h, find_zone("Asia/Kolkata").value()) == utc(2026, 11, 21, 12, 30));
  // In the hour the clock skips, the period starts where the gap ends.
  CHECK(clock_period_start(utc(2026, 3, 29, 1, 10), 2h, berlin) == utc(2026, 3, 29, 1, 0));
}
