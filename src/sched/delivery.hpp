#pragma once
// The HTTP posts of a scheduler's alerts (--ping-url): made by one thread
// of their own, from a bounded queue, so that a server that hangs or fails
// never delays the loop. Each post has a 10 s timeout and is tried again
// after 1 s, 5 s, 30 s and 2 min; one that is never delivered is logged
// once, when taskd gives it up.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/alerts.hpp"

namespace taskd::sched {

struct AlertPost {
  std::string url;
  std::string body;
  std::string content_type;
  std::string what;  // for the log: "the start ping of task \"backup\" (run 12)"
};

// Queues `post` for the scheduler's delivery thread, started at the first
// post; a post that finds the queue full is dropped and logged.
void post_alert(AlertPost post);

// Pings `url` (a task's --ping-url) of `ping` of run `run_id` of `task`,
// with the tail of `output` as the body.
void ping_run(std::string_view url, std::string_view task, std::int64_t run_id, core::Ping ping,
              std::string_view output);

// The most posts waiting at once.
inline constexpr std::size_t alert_queue_limit = 1000;

// At the scheduler's end: waits until the queued posts are delivered, or
// given up, for `limit` at most (a request made meanwhile has what is left
// of it). A post whose next attempt would come after the limit is given up
// at once; what is still queued when it passes is lost, each post logged
// once.
void drain_alerts(std::chrono::seconds limit);

// How long the scheduler's end waits for its alerts.
inline constexpr std::chrono::seconds alert_drain_limit{10};

}  // namespace taskd::sched
