#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/tzif.hpp"

using namespace taskd::core;
using namespace std::chrono;

namespace {

std::string big_endian(std::uint64_t value, int size) {
  std::string bytes;
  for (int shift = 8 * (size - 1); shift >= 0; shift -= 8) bytes += static_cast<char>(value >> shift & 0xff);
  return bytes;
}

struct LocalTimeType {
  std::int32_t offset;
  std::uint8_t is_dst;
  std::uint8_t abbreviation;
};

// The parts of a TZif file, written as RFC 8536 lays them out: a version 1
// header and data block (empty here, as taskd skips it), then the 64-bit
// header, data block and footer.
struct TzifParts {
  char version = '2';
  std::vector<std::int64_t> times;
  std::vector<std::uint8_t> indices;
  std::vector<LocalTimeType> types{{3600, 0, 0}};
  std::string abbreviations{"CET", 4};
  std::uint32_t leap_count = 0;
  std::uint32_t indicator_count = 0;
  std::string footer = "\nCET-1\n";

  // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
  std::string header(std::array<std::size_t, 6> counts) const {
    std::string bytes = "TZif" + std::string(1, version) + std::string(15, '\0');
    for (auto count : counts) bytes += big_endian(count, 4);
    return bytes;
  }

  std::string bytes() const {
    std::string out = header({}) + header({indicator_count, indicator_count, leap_count, times.size(), types.size(),
                                           abbreviations.size()});
    for (auto time : times) out += big_endian(static_cast<std::uint64_t>(time), 8);
    for (auto index : indices) out += static_cast<char>(index);
    for (auto type : types)
      out += big_endian(static_cast<std::uint32_t>(type.offset), 4) + static_cast<char>(type.is_dst) +
             static_cast<char>(type.abbreviation);
    out += abbreviations;
    for (std::uint32_t i = 0; i < leap_count; ++i) out += big_endian(78796800, 8) + big_endian(1, 4);
    out += std::string(2 * indicator_count, '\0');
    return out + footer;
  }
};

// Two changes: LMT until 1893, then CEST for a summer, then CET.
TzifParts berlin_like() {
  TzifParts parts;
  parts.times = {-2422054408, -1693706400, -1680483600};
  parts.indices = {2, 1, 2};
  parts.types = {{3208, 0, 0}, {7200, 1, 4}, {3600, 0, 9}};
  parts.abbreviations = std::string("LMT\0CEST\0CET\0", 13);
  parts.indicator_count = 3;
  parts.footer = "\nCET-1CEST,M3.5.0,M10.5.0/3\n";
  return parts;
}

std::string refusal(const TzifParts& parts) {
  auto parsed = parse_tzif(parts.bytes());
  REQUIRE_FALSE(parsed);
  CHECK(parsed.error().kind == ErrorKind::bad_input);
  return parsed.error().message;
}

std::string zoneinfo_file(const std::string& name) {
  std::ifstream file("/usr/share/zoneinfo/" + name, std::ios::binary);
  REQUIRE(file);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("tzif: the listed changes with the offsets they change to, and the footer") {
  auto tzif = parse_tzif(berlin_like().bytes());
  REQUIRE(tzif);
  REQUIRE(tzif->changes.size() == 3);
  CHECK(tzif->changes[0].at == sys_seconds{seconds{-2422054408}});
  CHECK(tzif->changes[0].offset == 1h);
  CHECK(tzif->changes[1].offset == 2h);
  CHECK(tzif->changes[2].at == sys_seconds{seconds{-1680483600}});
  CHECK(tzif->changes[2].offset == 1h);
  CHECK(tzif->initial_offset == seconds{3208});
  CHECK(tzif->footer == "CET-1CEST,M3.5.0,M10.5.0/3");
}

TEST_CASE("tzif: before the first change, the first standard-time type holds, even when type 0 is DST") {
  auto parts = berlin_like();
  std::swap(parts.types[0], parts.types[1]);  // CEST first, then LMT
  parts.indices = {2, 0, 2};
  auto tzif = parse_tzif(parts.bytes());
  REQUIRE(tzif);
  CHECK(tzif->initial_offset == seconds{3208});
}

TEST_CASE("tzif: a zone without changes and an empty footer") {
  TzifParts utc;
  utc.types = {{0, 0, 0}};
  utc.abbreviations = std::string("UTC", 4);
  utc.footer = "\n\n";
  auto tzif = parse_tzif(utc.bytes());
  REQUIRE(tzif);
  CHECK(tzif->changes.empty());
  CHECK(tzif->initial_offset == 0s);
  CHECK(tzif->footer.empty());
}

TEST_CASE("tzif: Debian's Europe/Berlin, version 1 block and all") {
  auto tzif = parse_tzif(zoneinfo_file("Europe/Berlin"));
  REQUIRE(tzif);
  CHECK(tzif->changes.size() == 143);
  CHECK(tzif->initial_offset == seconds{3208});
  CHECK(tzif->footer == "CET-1CEST,M3.5.0,M10.5.0/3");
}

TEST_CASE("tzif: every truncation of a real file is refused, none read past its end") {
  const std::string whole = zoneinfo_file("America/New_York");
  REQUIRE(parse_tzif(whole));
  for (std::size_t size = 0; size < whole.size(); ++size) {
    INFO("truncated to " << size << " bytes");
    // A copy of exactly `size` bytes, so that the sanitizers see any read past it.
    const std::string truncated = whole.substr(0, size);
    CHECK_FALSE(parse_tzif(truncated));
  }
  CHECK(parse_tzif("").error().message == "truncated: a header at byte 0 needs 44 bytes, the file has 0");
}

TEST_CASE("tzif: what is not a TZif file, or an old one, is refused by name") {
  CHECK_FALSE(is_tzif("# tzdb data for ..."));
  CHECK(is_tzif(berlin_like().bytes()));
  CHECK(parse_tzif(std::string(60, 'x')).error().message == "no \"TZif\" header at byte 0");
  auto version_1 = berlin_like();
  version_1.version = '\0';
  CHECK(refusal(version_1) == "version 1 (32-bit times, no footer): taskd reads version 2 or later");
  auto leap_seconds = berlin_like();
  leap_seconds.leap_count = 1;
  CHECK(refusal(leap_seconds) ==
        "leap-second corrections (a \"right/\" zone): taskd counts POSIX seconds, without them");
}

TEST_CASE("tzif: inconsistent contents are refused, saying where") {
  SUBCASE("a transition to a type the file does not have") {
    auto parts = berlin_like();
    parts.indices[1] = 3;
    CHECK(refusal(parts) == "transition 1 names local time type 3 at byte 113, of 3");
  }
  SUBCASE("transitions out of order") {
    auto parts = berlin_like();
    parts.times[2] = parts.times[1];
    CHECK(refusal(parts) == "transition 2 at byte 104 is not later than the one before");
  }
  SUBCASE("an offset of a day and more, a DST flag of 2, an abbreviation past the end") {
    for (LocalTimeType type : {LocalTimeType{93600, 0, 0}, LocalTimeType{3600, 2, 0}, LocalTimeType{3600, 0, 13}}) {
      auto parts = berlin_like();
      parts.types[2] = type;
      CHECK(refusal(parts).starts_with("local time type 2 at byte 127: "));
    }
  }
  SUBCASE("no local time types") {
    auto parts = berlin_like();
    parts.times.clear();
    parts.indices.clear();
    parts.types.clear();
    parts.indicator_count = 0;
    CHECK(refusal(parts) ==
          "the header at byte 44 counts 0 local time types and 13 abbreviation bytes: neither may be 0");
  }
  SUBCASE("indicators that are not one per type") {
    auto parts = berlin_like();
    parts.indicator_count = 2;
    CHECK(refusal(parts) == "the header at byte 44 counts 2 indicators for 3 local time types");
  }
  SUBCASE("a footer without its newlines") {
    auto parts = berlin_like();
    for (std::string footer : {"", "CET-1\n", "\nCET-1", "\nCET-1\n\n"}) {
      parts.footer = footer;
      CHECK(refusal(parts) == "the footer at byte 152 is not a TZ rule between two newlines at the end");
    }
  }
}
