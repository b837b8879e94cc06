#include "web/events.hpp"

#include <poll.h>

#include <thread>

#include "ops/json.hpp"
#include "ops/runs.hpp"
#include "store/runs.hpp"

namespace taskd::web {
namespace {

// How many of the newest runs are compared: more than start or end between
// two looks, which come at least every half second.
constexpr std::int64_t runs_compared = 200;
// How many runs seen queued or running, no longer among the newest, are
// looked up by id at each change, so that a long run's end, or the drop of
// a run that waited in the queue, is told however many runs came after it;
// past them the oldest are let go (their end is a change).
constexpr std::size_t active_followed = 1000;

bool is_active(core::RunStatus status) {
  return status == core::RunStatus::queued || status == core::RunStatus::running;
}

std::string event(std::string_view name, const ops::Json& data) {
  return fmt::format("event: {}\ndata: {}\n\n", name, data.dump(-1, ' ', false, ops::Json::error_handler_t::replace));
}

}  // namespace

core::Result<void> EventFeed::connect() {
  if (db_) return {};
  auto db = std::make_unique<store::Database>(TRY(open_()));
  watch_.emplace(TRY(sched::ChangeWatch::open(*db)));
  db_ = std::move(db);
  version_ = TRY(store::data_version(*db_));
  runs_.clear();
  TRY(changes(false));  // what is there now is not news
  return {};
}

// The newest runs, each one new or of another status since the last look
// an event when `tell`. The window only moves to newer runs, so a run not
// seen before is a new one. Then the runs seen queued or running that the
// window has left behind, each by its id.
core::Result<std::string> EventFeed::changes(bool tell) {
  std::map<std::int64_t, core::RunStatus> seen;
  std::string text;
  auto look = [&](const store::RunRecord& run) {
    seen.emplace(run.id, run.status);
    auto before = runs_.find(run.id);
    if (tell && (before == runs_.end() || before->second != run.status)) text += event("run", ops::run_json(run));
  };
  TRY(ops::for_each_run_of(*db_, "", {.limit = runs_compared}, "events", [&](const store::RunRecord& run) {
    look(run);
    return core::Result<void>();
  }));
  for (const auto& [id, status] : runs_) {
    if (!is_active(status) || seen.contains(id)) continue;
    auto run = TRY(store::find_run(*db_, id));
    if (run) look(*run);
  }
  while (seen.size() > static_cast<std::size_t>(runs_compared) + active_followed) seen.erase(seen.begin());
  runs_ = std::move(seen);
  return text;
}

void EventFeed::rest() {
  watch_.reset();
  db_.reset();
}

std::string EventFeed::next(std::chrono::milliseconds wait) {
  if (!connect()) {
    rest();
    std::this_thread::sleep_for(wait);
    return "";
  }
  pollfd watch{.fd = watch_->fd(), .events = POLLIN, .revents = 0};
  if (watch.fd >= 0) {
    ::poll(&watch, 1, static_cast<int>(wait.count()));
    watch_->drain();
  } else {
    std::this_thread::sleep_for(wait);
  }
  auto version = store::data_version(*db_);
  if (version && *version == version_) return "";
  auto text = version ? changes(true) : core::Result<std::string>(std::unexpected(version.error()));
  if (!text) {
    rest();
    return "";
  }
  version_ = *version;
  return *text + event("change", ops::Json::object());
}

}  // namespace taskd::web
