#include <doctest/doctest.h>

#include "core/time.hpp"

using namespace taskd::core;
using namespace std::chrono;

namespace {
Time at(int y, unsigned m, unsigned d, int hh, int mm, int ss, int ms = 0) {
  return sys_days{year{y} / month{m} / day{d}} + hours{hh} + minutes{mm} + seconds{ss} + milliseconds{ms};
}
}  // namespace

TEST_CASE("instants print as RFC 3339 UTC") {
  CHECK(format_rfc3339(at(2026, 11, 21, 14, 0, 0)) == "2026-11-21T14:00:00Z");
  CHECK(format_rfc3339(at(2026, 11, 21, 14, 0, 0, 137), Precision::milliseconds) == "2026-11-21T14:00:00.137Z");
  CHECK(format_rfc3339(at(1969, 12, 31, 23, 59, 59)) == "1969-12-31T23:59:59Z");
}

TEST_CASE("RFC 3339 reads back with Z, offsets and fractions") {
  CHECK(parse_rfc3339("2026-11-21T14:00:00Z").value() == at(2026, 11, 21, 14, 0, 0));
  CHECK(parse_rfc3339("2026-11-21T15:00:00+01:00").value() == at(2026, 11, 21, 14, 0, 0));
  CHECK(parse_rfc3339("2026-11-21T09:30:00-04:30").value() == at(2026, 11, 21, 14, 0, 0));
  CHECK(parse_rfc3339("2026-11-21t14:00:00.5z").value() == at(2026, 11, 21, 14, 0, 0, 500));
  CHECK(parse_rfc3339("2026-11-21 14:00:00.123456Z").value() == at(2026, 11, 21, 14, 0, 0, 123));
}

TEST_CASE("malformed times are refused with the position") {
  auto bad = parse_rfc3339("2026-11-21T25:00:00Z");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().kind == ErrorKind::bad_input);
  CHECK(bad.error().message.find("hour") != std::string::npos);
  CHECK_FALSE(parse_rfc3339("2026-02-30T00:00:00Z"));
  CHECK_FALSE(parse_rfc3339("2026-11-21T14:00:00"));
  CHECK_FALSE(parse_rfc3339("2026-11-21T14:00:00Zjunk"));
  CHECK_FALSE(parse_rfc3339("yesterday"));
  CHECK_FALSE(parse_rfc3339(""));
}
