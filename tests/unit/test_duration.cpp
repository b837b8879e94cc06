#include <doctest/doctest.h>

#include "core/duration.hpp"

using namespace taskd::core;
using namespace std::chrono_literals;

TEST_CASE("durations read as people write them") {
  CHECK(parse_duration("90s").value() == 90s);
  CHECK(parse_duration("5m").value() == 5min);
  CHECK(parse_duration("1h30m").value() == 90min);
  CHECK(parse_duration("2d").value() == 48h);
  CHECK(parse_duration("1w").value() == 168h);
  CHECK(parse_duration("1d2h3m4s").value() == 26h + 3min + 4s);
  CHECK(parse_duration("0s").value() == 0s);
}

TEST_CASE("a bare number is seconds, as systemd reads it") { CHECK(parse_duration("45").value() == 45s); }

TEST_CASE("a malformed duration names the input and the position") {
  auto unknown_unit = parse_duration("5x");
  REQUIRE_FALSE(unknown_unit);
  CHECK(unknown_unit.error().kind == ErrorKind::bad_input);
  CHECK(unknown_unit.error().message.find("\"5x\"") != std::string::npos);
  CHECK(unknown_unit.error().message.find("unknown unit 'x'") != std::string::npos);
  CHECK(unknown_unit.error().message.find("position 2") != std::string::npos);

  CHECK_FALSE(parse_duration(""));
  CHECK_FALSE(parse_duration("m5"));
  CHECK_FALSE(parse_duration("-5m"));
  CHECK_FALSE(parse_duration("5m3"));
  CHECK_FALSE(parse_duration("1.5h"));
  CHECK_FALSE(parse_duration(" 5m"));
}

TEST_CASE("units must go from largest to smallest, once each") {
  CHECK_FALSE(parse_duration("1m1h"));
  CHECK_FALSE(parse_duration("1m1m"));
}

TEST_CASE("durations with milliseconds print them last") {
  CHECK(format_duration_ms(850ms) == "850ms");
  CHECK(format_duration_ms(1100ms) == "1s100ms");
  CHECK(format_duration_ms(90s) == "1m30s");
  CHECK(format_duration_ms(-1100ms) == "-1s100ms");
  CHECK(format_duration_ms(-5ms) == "-5ms");
}

TEST_CASE("absurdly long durations are refused instead of overflowing") {
  CHECK_FALSE(parse_duration("99999999999999999999s"));
  CHECK_FALSE(parse_duration("5000w"));
  CHECK(parse_duration("3650d"));
}

TEST_CASE("durations print in the shortest form that reads back") {
  CHECK(format_duration(0s) == "0s");
  CHECK(format_duration(90s) == "1m30s");
  CHECK(format_duration(5400s) == "1h30m");
  CHECK(format_duration(48h) == "2d");
  CHECK(format_duration(26h + 4s) == "1d2h4s");
  for (auto seconds : {1s, 59s, 61s, 3599s, 3601s, 86399s, 90061s, 1209600s}) {
    CAPTURE(seconds.count());
    CHECK(parse_duration(format_duration(seconds)).value() == seconds);
  }
}
