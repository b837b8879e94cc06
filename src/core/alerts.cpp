#include "core/alerts.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/text.hpp"

namespace taskd::core {
namespace {

bool starts_with_scheme(std::string_view url, std::string_view scheme) {
  return url.size() >= scheme.size() && std::ranges::equal(url.substr(0, scheme.size()), scheme, [](char a, char b) {
           return (a >= 'A' && a <= 'Z' ? char(a - 'A' + 'a') : a) == b;
         });
}

// Where the authority of an http(s) URL starts, 0 for another scheme.
std::size_t authority_start(std::string_view url) {
  for (std::string_view scheme : {"http://", "https://"})
    if (starts_with_scheme(url, scheme)) return scheme.size();
  return 0;
}

// The authority: up to the path, query or fragment.
std::string_view authority_of(std::string_view url, std::size_t start) {
  auto rest = url.substr(start);
  return rest.substr(0, std::min(rest.find_first_of("/?#"), rest.size()));
}

nlohmann::json json_number(const std::optional<int>& number) {
  return number ? nlohmann::json(*number) : nlohmann::json();
}

// A run's time as `history --json` writes it: "2026-11-21T14:00:01.000Z".
std::string run_time(Time time) { return format_rfc3339(time, Precision::milliseconds); }

// "taskd: task backup failed on web1 (run 12): exit code 1: disk full",
// then the output's tail as a code block.
std::string chat_text(const NotifyFacts& facts, std::string_view host, std::string_view tail) {
  auto text = fmt::format("taskd: task {} {} on {} (run {}): {}", facts.task, to_string(facts.event), host,
                          facts.run_id, facts.reason);
  if (!tail.empty()) text += fmt::format("\n```\n{}\n```", tail);
  return text;
}

}  // namespace

std::string notify_post(const NotifyFacts& facts, NotifyFormat format, std::string_view host, std::string_view output) {
  // JSON strings are UTF-8: the bytes that are not become U+FFFD.
  auto text = [](std::string_view bytes) { return valid_utf8(bytes); };
  if (format == NotifyFormat::slack)
    return nlohmann::json{{"text", text(chat_text(facts, host, output_tail(output, chat_output_tail)))}}.dump();
  nlohmann::json post{
      {"task", text(facts.task)},
      {"run_id", facts.run_id},
      {"status", to_string(facts.status)},
      {"event", to_string(facts.event)},
      {"reason", text(facts.reason)},
      {"exit_code", json_number(facts.exit_code)},
      {"signal", json_number(facts.signal)},
      {"disabled_reason", text(facts.disabled_reason)},
      {"attempt_no", facts.attempt_no},
      {"started_at", facts.started_at ? nlohmann::json(run_time(*facts.started_at)) : nlohmann::json()},
      {"finished_at", run_time(facts.at)},
      {"host", text(host)},
      {"output_tail", text(output_tail(output, notify_output_tail))},
  };
  return post.dump();
}

Result<std::string> parse_alert_url(std::string_view text) {
  auto start = authority_start(text);
  auto authority = start ? authority_of(text, start) : std::string_view();
  auto host = authority.substr(std::min(authority.rfind('@') + 1, authority.size()));
  bool printable_ascii = std::ranges::all_of(text, [](char c) { return c > ' ' && c < 0x7f; });
  if (!start || host.empty() || host.front() == ':' || !printable_ascii)
    return fail(ErrorKind::bad_input, fmt::format("\"{}\" is not an http:// or https:// URL with a host",
                                                  printable(masked_url(text))));
  return std::string(text);
}

std::string masked_url(std::string_view url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  auto authority = authority_of(url, scheme_end + 3);
  auto at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  return fmt::format("{}***{}", url.substr(0, scheme_end + 3), url.substr(scheme_end + 3 + at));
}

std::string ping_target(std::string_view url, Ping ping) {
  auto path_end = std::min(url.find_first_of("?#", authority_start(url)), url.size());
  auto base = url.substr(0, path_end);
  auto suffix = ping == Ping::start ? "/start" : ping == Ping::failure ? "/fail" : "";
  while (*suffix && base.ends_with('/')) base.remove_suffix(1);
  return fmt::format("{}{}{}", base, suffix, url.substr(path_end));
}

}  // namespace taskd::core
