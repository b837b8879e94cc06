#include "core/time.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>
#include <optional>

namespace taskd::core {
namespace {

using namespace std::chrono;

// A cursor over the text that reads fixed-width numbers and literal characters.
class Rfc3339Reader {
 public:
  explicit Rfc3339Reader(std::string_view text) : text_(text) {}

  std::optional<int> digits(std::size_t width) {
    if (pos_ + width > text_.size()) return std::nullopt;
    int value = 0;
    for (std::size_t i = 0; i < width; ++i) {
      char c = text_[pos_ + i];
      if (c < '0' || c > '9') return std::nullopt;
      value = value * 10 + (c - '0');
    }
    pos_ += width;
    return value;
  }

  bool literal(std::string_view options) {
    if (pos_ < text_.size() && options.find(text_[pos_]) != std::string_view::npos) {
      ++pos_;
      return true;
    }
    return false;
  }

  // Fractional seconds after a '.', truncated to milliseconds.
  int fraction_ms() {
    int ms = 0;
    int scale = 100;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      ms += (text_[pos_] - '0') * scale;
      scale /= 10;
      ++pos_;
    }
    return ms;
  }

  bool at_end() const { return pos_ == text_.size(); }
  std::size_t position() const { return pos_ + 1; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

Rfc3339Text::Rfc3339Text(Time time, Precision precision) {
  auto day = floor<days>(time);
  year_month_day date{day};
  hh_mm_ss clock{time - day};
  // Compiled formats, straight into the buffer.
  char* end = fmt::format_to(bytes_.data(), FMT_COMPILE("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}"), int(date.year()),
                             unsigned(date.month()), unsigned(date.day()), clock.hours().count(),
                             clock.minutes().count(), clock.seconds().count());
  if (precision == Precision::milliseconds || clock.subseconds().count() != 0)
    end = fmt::format_to(end, FMT_COMPILE(".{:03}"), clock.subseconds().count());
  *end++ = 'Z';
  size_ = static_cast<std::size_t>(end - bytes_.data());
}

std::string format_rfc3339(Time time, Precision precision) { return std::string(Rfc3339Text(time, precision).view()); }

Result<Time> parse_rfc3339(std::string_view text) {
  Rfc3339Reader in(text);
  auto error = [&](std::string_view what) {
    return fail(ErrorKind::bad_input, fmt::format("invalid time \"{}\": {} at position {} (write e.g. "
                                                  "2026-11-21T14:00:00Z or 2026-11-21T15:00:00+01:00)",
                                                  text, what, in.position()));
  };
  auto year = in.digits(4);
  if (!year || !in.literal("-")) return error("expected YYYY-");
  auto month = in.digits(2);
  if (!month || !in.literal("-")) return error("expected MM-");
  auto day = in.digits(2);
  if (!day) return error("expected DD");
  year_month_day date{std::chrono::year{*year}, std::chrono::month(unsigned(*month)), std::chrono::day(unsigned(*day))};
  if (!date.ok()) return error("no such date");
  if (!in.literal("Tt ")) return error("expected 'T'");
  auto hour = in.digits(2);
  if (!hour || *hour > 23 || !in.literal(":")) return error("expected hour HH: (00-23)");
  auto minute = in.digits(2);
  if (!minute || *minute > 59 || !in.literal(":")) return error("expected minute MM: (00-59)");
  auto second = in.digits(2);
  if (!second || *second > 60) return error("expected second SS (00-60)");
  int ms = in.literal(".") ? in.fraction_ms() : 0;
  Time local = sys_days{date} + hours{*hour} + minutes{*minute} + seconds{std::min(*second, 59)} + Millis{ms};
  if (in.literal("Zz")) {
    if (!in.at_end()) return error("unexpected text after the time");
    return local;
  }
  bool ahead = in.literal("+");
  if (!ahead && !in.literal("-")) return error("expected 'Z' or an offset like +01:00");
  auto offset_hours = in.digits(2);
  if (!offset_hours || *offset_hours > 23 || !in.literal(":")) return error("expected offset hours HH:");
  auto offset_minutes = in.digits(2);
  if (!offset_minutes || *offset_minutes > 59) return error("expected offset minutes MM");
  if (!in.at_end()) return error("unexpected text after the time");
  auto offset = hours{*offset_hours} + minutes{*offset_minutes};
  return ahead ? local - offset : local + offset;
}

Result<std::optional<Time>> time_or_ago(std::string_view text, std::string_view option, Time now) {
  if (text.empty()) return std::optional<Time>();
  if (auto ago = parse_duration(text)) return std::optional<Time>(now - *ago);
  auto parsed = parse_rfc3339(text);
  if (!parsed)
    return fail(ErrorKind::bad_input,
                fmt::format("{}: \"{}\" is neither an RFC 3339 time nor a duration ago (2d)", option, text));
  return std::optional<Time>(*parsed);
}

}  // namespace taskd::core
