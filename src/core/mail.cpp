#include "core/mail.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "core/text.hpp"
#include "core/time.hpp"

namespace taskd::core {
namespace {

constexpr std::string_view address_specials = "<>()[]\\,;:\"";
constexpr std::size_t longest_address = 254;  // RFC 5321's path

bool fits_in_address(char c) {
  return c > ' ' && c < 0x7f && address_specials.find(c) == std::string_view::npos;
}

Result<std::string> checked_address(std::string_view address) {
  auto at = address.rfind('@');
  bool valid = !address.empty() && address.size() <= longest_address && address.front() != '-' &&
               std::ranges::all_of(address, fits_in_address) && at != std::string_view::npos && at > 0 &&
               at + 1 < address.size();
  if (!valid)
    return fail(ErrorKind::bad_input,
                fmt::format("\"{}\" is not a mail address (USER@DOMAIN, without spaces or any of {})",
                            printable(address), address_specials));
  return std::string(address);
}

// A header's value on one line: every control character a space, every
// byte past ASCII escaped (a header is ASCII).
std::string header_text(std::string_view text) {
  std::string line;
  for (unsigned char c : text) {
    if (c < ' ' || c == 0x7f) line += ' ';
    else if (c >= 0x80) line += fmt::format("\\x{:02x}", c);
    else line += char(c);
  }
  return line;
}

// The output's lines, each printable (no terminal control reaches the reader).
std::string printable_lines(std::string_view output) {
  std::string text;
  while (!output.empty()) {
    auto end = std::min(output.find('\n'), output.size());
    text += printable(output.substr(0, end));
    text += '\n';
    output.remove_prefix(std::min(end + 1, output.size()));
  }
  return text;
}

std::string outcome_line(const NotifyFacts& facts) {
  if (facts.signal) return fmt::format("Signal:     {}\n", *facts.signal);
  if (facts.exit_code) return fmt::format("Exit code:  {}\n", *facts.exit_code);
  return {};
}

}  // namespace

Result<std::vector<std::string>> parse_mail_to(std::string_view text) {
  std::vector<std::string> addresses;
  while (true) {
    auto comma = text.find(',');
    addresses.push_back(TRY(checked_address(text.substr(0, comma))));
    if (comma == std::string_view::npos) return addresses;
    text.remove_prefix(comma + 1);
  }
}

std::string notify_mail(const NotifyFacts& facts, const std::vector<std::string>& recipients, std::string_view host,
                        std::string_view output) {
  auto event = to_string(facts.event);
  std::string mail = fmt::format(
      "To: {}\n"
      "Subject: {}\n"
      "Auto-Submitted: auto-generated\n"
      "MIME-Version: 1.0\n"
      "Content-Type: text/plain; charset=UTF-8\n"
      "Content-Transfer-Encoding: 8bit\n"
      "\n",
      fmt::join(recipients, ", "),
      header_text(fmt::format("taskd: task {} {} on {}", facts.task, event, host)));
  mail += fmt::format("Task:       {}\nEvent:      {}\nStatus:     {}\nReason:     {}\n", printable(facts.task), event,
                      to_string(facts.status), printable(facts.reason));
  if (!facts.disabled_reason.empty()) mail += fmt::format("Disabled:   {}\n", printable(facts.disabled_reason));
  mail += outcome_line(facts);
  mail += fmt::format("Host:       {}\nRun:        {}\nAttempt:    {}\nFinished:   {}\n", printable(host),
                      facts.run_id, facts.attempt_no, format_rfc3339(facts.at));
  auto tail = output_tail(output, mail_output_tail);
  if (tail.empty()) return mail + "\nThe run wrote no output.\n";
  mail += tail.size() < output.size() ? fmt::format("\nThe last {} bytes of its output:\n\n", tail.size())
                                      : std::string("\nIts output:\n\n");
  return mail + printable_lines(valid_utf8(tail));
}

}  // namespace taskd::core
