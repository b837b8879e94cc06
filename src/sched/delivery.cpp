#include "sched/delivery.hpp"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdio>
#include <curl/curl.h>
#include <dlfcn.h>
#include <deque>
#include <expected>
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

// libcurl's functions, loaded at the first post rather than linked: linked,
// the fifteen libraries it brings cost every start of taskd about 2 ms (a
// quarter of `taskd --version`), and most taskd processes post nothing.
struct Curl {
  CURLcode (*global_init)(long flags);
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL* curl, CURLoption option, ...);
  CURLcode (*easy_perform)(CURL* curl);
  CURLcode (*easy_getinfo)(CURL* curl, CURLINFO info, ...);
  void (*easy_cleanup)(CURL* curl);
  const char* (*easy_strerror)(CURLcode code);
  curl_slist* (*slist_append)(curl_slist* list, const char* text);
  void (*slist_free_all)(curl_slist* list);
};

template <class Function>
bool find_symbol(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(::dlsym(library, name));
  return function != nullptr;
}

// libcurl (Debian's libcurl4), initialized; or why it is not there.
std::expected<Curl, std::string> load_curl() {
  void* library = ::dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  if (!library) return std::unexpected(fmt::format("cannot load libcurl: {}", ::dlerror()));
  Curl curl{};
  bool found = find_symbol(library, "curl_global_init", curl.global_init) &&
               find_symbol(library, "curl_easy_init", curl.easy_init) &&
               find_symbol(library, "curl_easy_setopt", curl.easy_setopt) &&
               find_symbol(library, "curl_easy_perform", curl.easy_perform) &&
               find_symbol(library, "curl_easy_getinfo", curl.easy_getinfo) &&
               find_symbol(library, "curl_easy_cleanup", curl.easy_cleanup) &&
               find_symbol(library, "curl_easy_strerror", curl.easy_strerror) &&
               find_symbol(library, "curl_slist_append", curl.slist_append) &&
               find_symbol(library, "curl_slist_free_all", curl.slist_free_all);
  if (!found) return std::unexpected(fmt::format("libcurl lacks a function taskd uses: {}", ::dlerror()));
  curl.global_init(CURL_GLOBAL_DEFAULT);
  return curl;
}

// One attempt, given `timeout`: empty when the server answered 2xx, else
// what went wrong.
std::string attempt(const Curl& api, const AlertPost& post, std::chrono::milliseconds timeout) {
  CURL* curl = api.easy_init();
  if (!curl) return "libcurl could not start a request";
  char error[CURL_ERROR_SIZE] = "";
  curl_slist* headers = api.slist_append(nullptr, ("Content-Type: " + post.content_type).c_str());
  api.easy_setopt(curl, CURLOPT_URL, post.url.c_str());
  api.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  api.easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  api.easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  api.easy_setopt(curl, CURLOPT_MAXREDIRS, 3L);
  api.easy_setopt(curl, CURLOPT_POSTREDIR, long{CURL_REDIR_POST_ALL});
  api.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  api.easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  api.easy_setopt(curl, CURLOPT_USERAGENT, "taskd/" TASKD_VERSION);
  api.easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  api.easy_setopt(curl, CURLOPT_POSTFIELDS, post.body.data());
  api.easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(post.body.size()));
  using Discard = std::size_t (*)(char*, std::size_t, std::size_t, void*);
  Discard discard = [](char*, std::size_t size, std::size_t count, void*) {
    return size * count;  // the answer's body is not read
  };
  api.easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
  api.easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  CURLcode code = api.easy_perform(curl);
  long status = 0;
  api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  api.slist_free_all(headers);
  api.easy_cleanup(curl);
  if (code != CURLE_OK) return *error ? std::string(error) : std::string(api.easy_strerror(code));
  if (status < 200 || status > 299) return fmt::format("the server answered HTTP {}", status);
  return {};
}

class Deliveries {
 public:
  Deliveries() : curl_(load_curl()), thread_([this] { deliver(); }) {}

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
      if (!curl_) {
        give_up(queued, curl_.error());
        continue;
      }
      auto failure = attempt(*curl_, queued.post, due->timeout);
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
  const std::expected<Curl, std::string> curl_;
  std::thread thread_;
};

// The scheduler's deliveries, started at its first post; never destroyed
// (an exit without drain_alerts leaves what is queued).
Deliveries* deliveries = nullptr;
std::mutex deliveries_mutex;

}  // namespace

void post_alert(AlertPost post) {
  std::unique_lock lock(deliveries_mutex);
  if (!deliveries) deliveries = new Deliveries;
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
