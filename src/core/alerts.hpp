#pragma once
// The URLs a task's alerts are posted to (--ping-url, --notify-url): which
// are taken, where each ping goes, what a notification posts, and how a URL
// is written where people read it.
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/notify.hpp"

namespace taskd::core {

// An http:// or https:// URL with a host, printable ASCII without spaces;
// bad input otherwise (the message masks its credentials).
Result<std::string> parse_alert_url(std::string_view text);

// `url` with the credentials it carries (user:password@) masked as ***@,
// for a log line or a message.
std::string masked_url(std::string_view url);

// The healthchecks.io / Cronitor protocol: a run's start, success and failure.
enum class Ping { start, success, failure };

// Where `ping` of a run goes: URL/start, URL, URL/fail (before any query).
std::string ping_target(std::string_view url, Ping ping);

// What --notify-url posts of `facts`, sent from `host`, with the tail of
// `output`: a JSON object (task, run_id, status, event, reason, exit_code,
// signal, disabled_reason, attempt_no, started_at, finished_at, host,
// output_tail; times in RFC 3339 UTC), or a chat webhook's {"text": ...}.
std::string notify_post(const NotifyFacts& facts, NotifyFormat format, std::string_view host, std::string_view output);

// The bytes of the output's tail a post carries (a chat message, less).
inline constexpr std::size_t notify_output_tail = 10 * 1024;
inline constexpr std::size_t chat_output_tail = 1024;

// The bytes of the output's tail a ping carries.
inline constexpr std::size_t ping_output_tail = 10 * 1024;

}  // namespace taskd::core
