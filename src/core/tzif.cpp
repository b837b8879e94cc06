#include "core/tzif.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace taskd::core {
namespace {

using std::chrono::seconds;

constexpr std::string_view magic = "TZif";
// The magic, a version byte, 15 reserved bytes and six 32-bit counts.
constexpr std::size_t header_size = 44;
constexpr std::size_t counts_at = 20;
// A local time type: a 32-bit UTC offset, a DST flag, an abbreviation index.
constexpr std::size_t type_size = 6;
// RFC 8536, 3.2: a UTC offset lies within -25 h and +26 h.
constexpr std::int64_t lowest_offset = -89999;
constexpr std::int64_t highest_offset = 93599;

std::unexpected<Error> corrupt(std::string what) { return fail(ErrorKind::bad_input, std::move(what)); }

// The big-endian unsigned integer of `size` bytes at `at`, which the caller
// has checked lie within `bytes`.
std::uint64_t big_endian(std::string_view bytes, std::size_t at, std::size_t size) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < size; ++i) value = value << 8 | static_cast<unsigned char>(bytes[at + i]);
  return value;
}

std::uint32_t uint32_at(std::string_view bytes, std::size_t at) {
  return static_cast<std::uint32_t>(big_endian(bytes, at, 4));
}
std::int32_t int32_at(std::string_view bytes, std::size_t at) {
  return static_cast<std::int32_t>(uint32_at(bytes, at));
}
std::int64_t int64_at(std::string_view bytes, std::size_t at) {
  return static_cast<std::int64_t>(big_endian(bytes, at, 8));
}
unsigned byte_at(std::string_view bytes, std::size_t at) { return static_cast<unsigned char>(bytes[at]); }

// Whether `size` bytes from `at` lie within the file.
Result<void> check_fits(std::string_view bytes, std::size_t at, std::uint64_t size, std::string_view what) {
  if (at <= bytes.size() && size <= bytes.size() - at) return {};
  return corrupt(fmt::format("truncated: {} at byte {} needs {} bytes, the file has {}", what, at, size, bytes.size()));
}

struct Header {
  unsigned version;  // the byte: 0 for version 1, else '2', '3'…
  std::uint32_t isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt;

  // The size of the data block that follows, whose times take `time_size` bytes.
  std::uint64_t data_size(std::uint64_t time_size) const {
    return std::uint64_t{timecnt} * (time_size + 1) + std::uint64_t{typecnt} * type_size + charcnt +
           std::uint64_t{leapcnt} * (time_size + 4) + isstdcnt + isutcnt;
  }
};

Result<Header> read_header(std::string_view bytes, std::size_t at) {
  TRY(check_fits(bytes, at, header_size, "a header"));
  if (bytes.substr(at, magic.size()) != magic) return corrupt(fmt::format("no \"TZif\" header at byte {}", at));
  auto count = [&](std::size_t i) { return uint32_at(bytes, at + counts_at + 4 * i); };
  return Header{byte_at(bytes, at + magic.size()), count(0), count(1), count(2), count(3), count(4), count(5)};
}

Result<void> check_version(const Header& header) {
  if (header.version == 0) return corrupt("version 1 (32-bit times, no footer): taskd reads version 2 or later");
  if (header.version < '2') return corrupt(fmt::format("unknown version byte {:#04x} at byte 4", header.version));
  return {};
}

// The counts of the 64-bit header, at `at`, against each other.
Result<void> check_counts(const Header& header, std::size_t at) {
  if (header.typecnt == 0 || header.charcnt == 0)
    return corrupt(
        fmt::format("the header at byte {} counts {} local time types and {} abbreviation bytes: "
                    "neither may be 0",
                    at, header.typecnt, header.charcnt));
  for (auto indicators : {header.isutcnt, header.isstdcnt})
    if (indicators != 0 && indicators != header.typecnt)
      return corrupt(fmt::format("the header at byte {} counts {} indicators for {} local time types", at, indicators,
                                 header.typecnt));
  if (header.leapcnt != 0)
    return corrupt("leap-second corrections (a \"right/\" zone): taskd counts POSIX seconds, without them");
  return {};
}

// The UTC offsets of the local time types at `at`, with their DST flags.
struct LocalTimeType {
  seconds offset;
  bool is_dst;
};

Result<std::vector<LocalTimeType>> read_types(std::string_view bytes, std::size_t at, const Header& header) {
  std::vector<LocalTimeType> types;
  for (std::size_t i = 0; i < header.typecnt; ++i, at += type_size) {
    const std::int64_t offset = int32_at(bytes, at);
    const unsigned is_dst = byte_at(bytes, at + 4);
    const unsigned abbreviation = byte_at(bytes, at + 5);
    if (offset < lowest_offset || offset > highest_offset || is_dst > 1 || abbreviation >= header.charcnt)
      return corrupt(
          fmt::format("local time type {} at byte {}: UTC offset {} s, DST flag {}, abbreviation at {} "
                      "of {} (offsets lie within -25 h and +26 h, the flag is 0 or 1)",
                      i, at, offset, is_dst, abbreviation, header.charcnt));
    types.push_back({seconds{offset}, is_dst == 1});
  }
  return types;
}

// The transition times at `at`, each followed (after all of them) by the
// index of the type it changes to.
Result<std::vector<ListedChange>> read_changes(std::string_view bytes, std::size_t at, const Header& header,
                                               const std::vector<LocalTimeType>& types) {
  std::vector<ListedChange> changes;
  const std::size_t indices_at = at + 8 * std::size_t{header.timecnt};
  for (std::size_t i = 0; i < header.timecnt; ++i) {
    const std::chrono::sys_seconds time{seconds{int64_at(bytes, at + 8 * i)}};
    const unsigned type = byte_at(bytes, indices_at + i);
    if (type >= types.size())
      return corrupt(fmt::format("transition {} names local time type {} at byte {}, of {}", i, type, indices_at + i,
                                 types.size()));
    if (!changes.empty() && time <= changes.back().at)
      return corrupt(fmt::format("transition {} at byte {} is not later than the one before", i, at + 8 * i));
    changes.push_back({time, types[type].offset});
  }
  return changes;
}

// The first standard-time type, else the first type.
seconds initial_offset(const std::vector<LocalTimeType>& types) {
  auto standard = std::ranges::find(types, false, &LocalTimeType::is_dst);
  return standard == types.end() ? types.front().offset : standard->offset;
}

// The footer from `at` on: a newline, the TZ rule, a newline, the end.
Result<std::string> read_footer(std::string_view bytes, std::size_t at) {
  const auto rest = bytes.substr(at);
  if (rest.size() < 2 || rest.front() != '\n' || rest.find('\n', 1) != rest.size() - 1)
    return corrupt(fmt::format("the footer at byte {} is not a TZ rule between two newlines at the end", at));
  return std::string(rest.substr(1, rest.size() - 2));
}

}  // namespace

bool is_tzif(std::string_view bytes) { return bytes.starts_with(magic); }

Result<Tzif> parse_tzif(std::string_view bytes) {
  auto first = TRY(read_header(bytes, 0));
  TRY(check_version(first));
  // The version 1 block, 32-bit times, comes first; taskd reads the second.
  TRY(check_fits(bytes, header_size, first.data_size(4), "the version 1 data"));
  const std::size_t second_at = header_size + first.data_size(4);
  auto second = TRY(read_header(bytes, second_at));
  TRY(check_counts(second, second_at));
  const std::size_t data_at = second_at + header_size;
  TRY(check_fits(bytes, data_at, second.data_size(8), "the 64-bit data"));
  const std::size_t types_at = data_at + 9 * std::size_t{second.timecnt};
  auto types = TRY(read_types(bytes, types_at, second));
  auto changes = TRY(read_changes(bytes, data_at, second, types));
  auto footer = TRY(read_footer(bytes, data_at + second.data_size(8)));
  return Tzif{initial_offset(types), std::move(changes), std::move(footer)};
}

}  // namespace taskd::core
