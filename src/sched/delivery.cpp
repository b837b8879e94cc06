#include "sched/delivery.hpp"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdio>
#include <curl/curl.h>
#include <deque>
#include <fmt/format.h>
#include <mutex>
#include <optional>
#include <thread>

#include "core/notify.hpp"

namespace taskd::sched {
namespace {

using Steady = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::chrono::milliseconds request_timeout = 10s;
// The waits before the attempts after the first.
constexpr std::array<Steady::duration, 4> retry_after{1s, 5s, 30s, 120s};

struct Queued {
  AlertPost post;
  Steady::time_point due;
  int attempts = 0;
  std::string failure;  // of the last attempt
};

void give_up(const Queued& queued, std::string_view why) {
  fmt::print(stderr, "taskd: {} to {} was not delivered ({} attempt{}): {}\n", queued.post.what,
             core::masked_url(queued.post.url), queued.attempts, queued.attempts == 1 ? "" : "s", why);
}

// One attempt, given `timeout`: empty when the server answered 2xx, else
// what went wrong.
std::string attempt(const AlertPost& post, std::chrono::milliseconds timeout) {
  CURL* curl = curl_easy_init();
  if (!curl) return "libcurl could not start a request";
  char error[CURL_ERROR_SIZE] = "";
  curl_slist* headers = curl_slist_append(nullptr, ("Content-Type: " + post.content_type).c_str());
  curl_easy_setopt(curl, CURLOPT_URL, post.url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 3L);
  curl_easy_setopt(curl, CURLOPT_POSTREDIR, long{CURL_REDIR_POST_ALL});
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "taskd/" TASKD_VERSION);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, post.body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(post.body.size()));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, +[](char*, std::size_t size, std::size_t count, void*) {
    return size * count;  // the answer's body is not read
  });
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  CURLcode code = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (code != CURLE_OK) return *error ? std::string(error) : std::string(curl_easy_strerror(code));
  if (status < 200 || status > 299) return fmt::format("the server answered HTTP {}", status);
  return {};
}

class Deliveries {
 public:
  Deliveries() : thread_([this] { deliver(); }) {}

  void post(AlertPost post) {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= alert_queue_limit || deadline_) {
      give_up({std::move(post)}, deadline_ ? "taskd is stopping" : "too many alerts are waiting");
      return;
    }
    queue_.push_back({std::move(post), Steady::now()});
    wake_.notify_one();
  }

  void drain(std::chrono::seconds limit) {
    {
      std::lock_guard lock(mutex_);
      deadline_ = Steady::now() + limit;
      wake_.notify_one();
    }
    thread_.join();
  }

 private:
  struct Due {
    Queued queued;
    std::chrono::milliseconds timeout;  // a request's, or what is left of the drain's
  };

  // The post to attempt now, or none once the queue is empty and taskd
  // stops; waits for the earliest due one.
  std::optional<Due> next() {
    std::unique_lock lock(mutex_);
    while (true) {
      give_up_past_deadline();
      if (queue_.empty() && deadline_) return std::nullopt;
      auto earliest = std::ranges::min_element(queue_, {}, &Queued::due);
      if (earliest != queue_.end() && earliest->due <= Steady::now()) {
        Due due{std::move(*earliest), request_timeout};
        queue_.erase(earliest);
        if (deadline_)
          due.timeout = std::clamp(std::chrono::ceil<std::chrono::milliseconds>(*deadline_ - Steady::now()),
                                   std::chrono::milliseconds(1), request_timeout);  // 0 would be none
        return due;
      }
      if (earliest == queue_.end()) wake_.wait(lock);
      else wake_.wait_until(lock, earliest->due);
    }
  }

  // While stopping: the posts that cannot be attempted before the deadline.
  void give_up_past_deadline() {
    if (!deadline_) return;
    bool passed = Steady::now() >= *deadline_;
    std::erase_if(queue_, [&](const Queued& queued) {
      if (!passed && queued.due <= *deadline_) return false;
      give_up(queued, queued.failure.empty() ? std::string("taskd stopped before its first attempt")
                                             : "taskd stopped before its next attempt; " + queued.failure);
      return true;
    });
  }

  void deliver() {
    while (auto due = next()) {
      auto& queued = due->queued;
      auto failure = attempt(queued.post, due->timeout);
      ++queued.attempts;
      if (failure.empty()) continue;
      if (queued.attempts > static_cast<int>(retry_after.size())) {
        give_up(queued, failure);
        continue;
      }
      queued.failure = std::move(failure);
      queued.due = Steady::now() + retry_after[queued.attempts - 1];
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(queued));
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Queued> queue_;
  std::optional<Steady::time_point> deadline_;  // set: taskd is stopping
  std::thread thread_;
};

// The scheduler's deliveries, started at its first post; never destroyed
// (an exit without drain_alerts leaves what is queued).
Deliveries* deliveries = nullptr;
std::mutex deliveries_mutex;

}  // namespace

void post_alert(AlertPost post) {
  std::unique_lock lock(deliveries_mutex);
  if (!deliveries) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    deliveries = new Deliveries;
  }
  lock.unlock();
  deliveries->post(std::move(post));
}

void ping_run(std::string_view url, std::string_view task, std::int64_t run_id, core::Ping ping,
              std::string_view output) {
  auto name = ping == core::Ping::start ? "start" : ping == core::Ping::success ? "success" : "failure";
  post_alert({.url = core::ping_target(url, ping),
              .body = std::string(core::output_tail(output, core::ping_output_tail)),
              .content_type = "text/plain; charset=utf-8",
              .what = fmt::format("the {} ping of task \"{}\" (run {})", name, task, run_id)});
}

void drain_alerts(std::chrono::seconds limit) {
  std::lock_guard lock(deliveries_mutex);
  if (deliveries) deliveries->drain(limit);
}

}  // namespace taskd::sched
