#pragma once
// TZif files (RFC 8536), the compiled IANA time zones below
// /usr/share/zoneinfo: the UTC offsets a zone has had and when each began,
// and the POSIX TZ rule (the footer) that tells the offsets after the last
// listed change. Reading one is a pure function of its bytes.
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace taskd::core {

// From `at` on, the zone is `offset` east of UTC.
struct ListedChange {
  std::chrono::sys_seconds at;
  std::chrono::seconds offset;
};

struct Tzif {
  // The offset before the first change: the file's first standard-time
  // type, as zic, glibc and Python's zoneinfo read it.
  std::chrono::seconds initial_offset;
  std::vector<ListedChange> changes;  // in strictly ascending order of `at`
  std::string footer;                 // "" when the file has none
};

// Whether the bytes start as a TZif file does ("TZif"): anything else is no
// time zone at all, rather than a broken one.
bool is_tzif(std::string_view bytes);

// Reads a TZif file of version 2 or later. Refused, with a message that says
// what is wrong and at which byte: version 1 (32-bit times, no footer),
// leap-second corrections (the "right/" zones count TAI seconds, taskd POSIX
// seconds), and anything truncated or inconsistent.
Result<Tzif> parse_tzif(std::string_view bytes);

}  // namespace taskd::core
