// libFuzzer-style target for the schedule parsers: whatever the bytes,
// parsing gives a value or an error and never crashes or hangs, a cron
// expression that parses gives strictly increasing slots, also across DST
// changes, a POSIX TZ rule that parses gives offset periods that hold the
// instant asked about, and a TZif file that parses lists its changes in
// strictly ascending order. `make fuzz` builds it with afl-g++ (stdin_driver.cpp
// feeds it one input on stdin) and fuzzes it for FUZZ_SECONDS; clang's own
// libFuzzer cannot be used while clang's <expected> lacks C++23 support.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/cron.hpp"
#include "core/duration.hpp"
#include "core/posix_tz.hpp"
#include "core/rrule.hpp"
#include "core/tzif.hpp"

using namespace taskd::core;
using namespace std::chrono;

namespace {

constexpr int slots_checked = 4;

void require(bool condition) {
  if (!condition) std::abort();
}

Time utc(int y, unsigned m, unsigned d, int hh, int mm) {
  return sys_days{year{y} / month{m} / day{d}} + hours{hh} + minutes{mm};
}

void check_slots_increase(const CronSpec& spec, Zone zone, Time from) {
  Time t = from;
  for (int i = 0; i < slots_checked; ++i) {
    auto next = cron_next_after(spec, zone, t);
    if (!next) return;
    require(*next > t);
    t = *next;
  }
}

void check_cron(std::string_view text) {
  static const Zone utc_zone = find_zone("UTC").value();
  static const Zone new_york = find_zone("America/New_York").value();
  auto spec = parse_cron(text, "fuzz");
  if (!spec) return;
  check_slots_increase(*spec, utc_zone, utc(2026, 11, 21, 14, 0));
  check_slots_increase(*spec, new_york, utc(2026, 3, 8, 6, 50));   // 10 minutes before spring forward
  check_slots_increase(*spec, new_york, utc(2026, 11, 1, 5, 10));  // in the first pass of the repeated hour
}

void check_posix_tz(std::string_view text) {
  auto tz = parse_posix_tz(text);
  if (!tz) return;
  for (auto t : {utc(1900, 1, 1, 0, 0), utc(2040, 3, 25, 1, 0), utc(2582, 12, 31, 23, 59)}) {
    const auto instant = floor<seconds>(t);
    const auto period = posix_tz_period(*tz, instant);
    require(period.begin <= instant && instant < period.end);
  }
}

void check_tzif(std::string_view bytes) {
  auto tzif = parse_tzif(bytes);
  if (!tzif) return;
  auto not_later = [](const ListedChange& a, const ListedChange& b) { return b.at <= a.at; };
  require(std::ranges::adjacent_find(tzif->changes, not_later) == tzif->changes.end());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Any outcome of a parser but a crash or a hang is fine.
  parse_duration(text);
  check_cron(text);
  parse_rrule(text, LocalTime{date::local_days{date::year{2026} / 1 / 1} + hours{9}});
  check_posix_tz(text);
  check_tzif(text);
  return 0;
}
