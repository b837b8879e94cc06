#include "ops/metrics.hpp"

#include <fmt/format.h>

#include "ops/check.hpp"
#include "store/tasks.hpp"

namespace taskd::ops {
namespace {

using core::Result;

// Tasks by condition: the three rare ones each from its partial index, the
// active ones as the rest of the total.
Result<std::vector<store::NamedCount>> tasks_by_condition(store::Database& db) {
  using core::Condition;
  auto total = TRY(store::count_tasks(db, {}));
  std::vector<store::NamedCount> counts{{"active", total}};
  for (auto [condition, name] : {std::pair{Condition::paused, "paused"}, std::pair{Condition::disabled, "disabled"},
                                 std::pair{Condition::failing, "failing"}}) {
    auto count = TRY(store::count_tasks(db, {.condition = condition}));
    counts.front().count -= count;
    counts.push_back({name, count});
  }
  return counts;
}

// The text, written out in blocks of about this many bytes.
constexpr std::size_t block_size = 64 * 1024;

class Text {
 public:
  explicit Text(const std::function<void(std::string_view)>& write) : write_(write) {}

  template <class... Args>
  void line(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(fmt::appender(buffer_), format, std::forward<Args>(args)...);
    buffer_.push_back('\n');
    if (buffer_.size() >= block_size) flush();
  }

  void header(std::string_view name, std::string_view type, std::string_view help) {
    line("# HELP {} {}\n# TYPE {} {}", name, help, name, type);
  }

  // Not in a destructor: `write` may throw to stop the text.
  void flush() {
    write_(std::string_view(buffer_.data(), buffer_.size()));
    buffer_.clear();
  }

 private:
  const std::function<void(std::string_view)>& write_;
  fmt::memory_buffer buffer_;
};

// A Prometheus label value: backslash, quote and newline escaped.
std::string label(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out;
}

void write_counts(Text& text, std::string_view name, std::string_view label_name,
                  const std::vector<store::NamedCount>& counts) {
  for (const auto& count : counts) text.line("{}{{{}=\"{}\"}} {}", name, label_name, label(count.name), count.count);
}

void write_lateness(Text& text, const store::LatenessHistogram& lateness) {
  text.header("taskd_start_lateness_seconds", "histogram",
              "Started minus scheduled, of the scheduled runs that started and ended.");
  for (std::size_t i = 0; i < lateness.bounds.size(); ++i)
    text.line("taskd_start_lateness_seconds_bucket{{le=\"{}\"}} {}", lateness.bounds[i], lateness.at_most[i]);
  text.line("taskd_start_lateness_seconds_bucket{{le=\"+Inf\"}} {}", lateness.count);
  text.line("taskd_start_lateness_seconds_sum {}", lateness.sum_seconds);
  text.line("taskd_start_lateness_seconds_count {}", lateness.count);
}

double unix_seconds(core::Time time) { return static_cast<double>(core::to_unix_ms(time)) / 1000.0; }

void write_last_successes(Text& text, const std::vector<store::NamedTime>& successes) {
  text.header("taskd_task_last_success_timestamp_seconds", "gauge",
              "When the task's last successful run ended (a task that never succeeded has no sample).");
  for (const auto& success : successes)
    text.line("taskd_task_last_success_timestamp_seconds{{task=\"{}\"}} {:.3f}", label(success.name),
              unix_seconds(success.time));
}

void write_heartbeat(Text& text, const std::optional<core::Time>& heartbeat) {
  text.header("taskd_scheduler_heartbeat_timestamp_seconds", "gauge",
              "The newest heartbeat of a scheduler on the database (taskd run, or a tick of taskd run-once); 0 while "
              "none was seen.");
  text.line("taskd_scheduler_heartbeat_timestamp_seconds {:.3f}", heartbeat ? unix_seconds(*heartbeat) : 0.0);
}

void write_totals(Text& text, const Metrics& read) {
  text.header("taskd_runs_total", "counter", "Runs that ended, by status (pruning the history does not lower it).");
  write_counts(text, "taskd_runs_total", "status", read.ended);
  text.header("taskd_runs_in_flight", "gauge", "Runs queued and running now.");
  write_counts(text, "taskd_runs_in_flight", "status", read.in_flight);
  write_lateness(text, read.lateness);
  text.header("taskd_queue_depth", "gauge", "Queued runs by group.");
  write_counts(text, "taskd_queue_depth", "group", read.queue);
  text.header("taskd_tasks", "gauge", "Tasks by state (as taskd list --state selects them).");
  write_counts(text, "taskd_tasks", "state", read.tasks);
  text.header("taskd_history_runs", "gauge", "Ended runs the history holds now.");
  text.line("taskd_history_runs {}", read.history.runs);
  text.header("taskd_history_output_bytes", "gauge", "Bytes of captured output the history holds now.");
  text.line("taskd_history_output_bytes {}", read.history.output_bytes);
  write_last_successes(text, read.successes);
  write_heartbeat(text, read.heartbeat);
}

using TaskSample = std::function<std::optional<double>(const core::TaskState& state)>;

// One series of the tasks: its header, then the sample `sample` makes of
// each task (none: no sample), as the rows are read. A walk per series (of
// the columns `list` reads), so that a million tasks take the memory of one
// block of text.
Result<void> write_task_series(store::Database& db, Text& text, std::string_view name, std::string_view help,
                               const TaskSample& sample) {
  text.header(name, "gauge", help);
  return store::for_each_task_headline(db, {}, [&](const store::StoredTask& stored) -> Result<void> {
    if (!stored) return {};
    if (auto value = sample(stored->state))
      text.line("{}{{task=\"{}\"}} {:.3f}", name, label(stored->definition.name), *value);
    return {};
  });
}

std::optional<double> last_succeeded(const core::TaskState& state) {
  if (!state.last_status) return std::nullopt;
  return *state.last_status == core::RunStatus::succeeded ? 1 : 0;
}

std::optional<double> next_run(const core::TaskState& state) {
  if (!state.next_run_at) return std::nullopt;
  return unix_seconds(*state.next_run_at);
}

Result<void> write_last_durations(store::Database& db, Text& text) {
  text.header("taskd_task_last_duration_seconds", "gauge",
              "How long the task's last run that ended took, from its start to its end (none before one ended).");
  return store::for_each_task_run_stats(db, [&](const store::TaskRunStats& stats) {
    if (!stats.last_duration) return;
    text.line("taskd_task_last_duration_seconds{{task=\"{}\"}} {:.3f}", label(stats.name),
              std::chrono::duration<double>(*stats.last_duration).count());
  });
}

// Whether a task's count of a status is written: always for succeeded and
// failed, so that a task's first failure is an increase from 0 that rate()
// and increase() see; the others once they are not 0.
bool written_status(core::RunStatus status, std::int64_t count) {
  return count > 0 || status == core::RunStatus::succeeded || status == core::RunStatus::failed;
}

Result<void> write_task_run_totals(store::Database& db, Text& text) {
  text.header("taskd_task_runs_total", "counter",
              "Runs of the task that ended, by status (pruning the history does not lower it; succeeded and failed "
              "are written from the task's first run that ended, the others once they are not 0).");
  return store::for_each_task_run_stats(db, [&](const store::TaskRunStats& stats) {
    auto name = label(stats.name);
    for (std::size_t i = 0; i < stats.ended.size(); ++i)
      if (written_status(store::ended_statuses[i], stats.ended[i]))
        text.line("taskd_task_runs_total{{task=\"{}\",status=\"{}\"}} {}", name,
                  core::to_string(store::ended_statuses[i]), stats.ended[i]);
  });
}

Result<void> write_task_lateness(store::Database& db, Text& text) {
  text.header("taskd_task_start_lateness_seconds", "histogram",
              "Started minus scheduled, of the task's scheduled runs that started and ended (none before one did).");
  return store::for_each_task_run_stats(db, [&](const store::TaskRunStats& stats) {
    if (stats.late_count == 0) return;
    auto name = label(stats.name);
    for (std::size_t i = 0; i < stats.late_at_most.size(); ++i)
      text.line("taskd_task_start_lateness_seconds_bucket{{task=\"{}\",le=\"{}\"}} {}", name,
                store::task_lateness_bounds[i], stats.late_at_most[i]);
    text.line("taskd_task_start_lateness_seconds_bucket{{task=\"{}\",le=\"+Inf\"}} {}", name, stats.late_count);
    text.line("taskd_task_start_lateness_seconds_sum{{task=\"{}\"}} {:.3f}", name,
              static_cast<double>(stats.late_sum_ms) / 1000.0);
    text.line("taskd_task_start_lateness_seconds_count{{task=\"{}\"}} {}", name, stats.late_count);
  });
}

Result<void> write_task_series(store::Database& db, Text& text) {
  TRY(write_task_run_totals(db, text));
  TRY(write_task_lateness(db, text));
  TRY(write_last_durations(db, text));
  TRY(write_task_series(db, text, "taskd_task_last_run_succeeded",
                        "1 when the task's last run that ended succeeded, 0 when it did not (failed, timed out, lost, "
                        "skipped, dropped).",
                        last_succeeded));
  return write_task_series(db, text, "taskd_task_next_run_timestamp_seconds",
                           "When the task runs next (a task with none has no sample).", next_run);
}

}  // namespace

Result<void> write_metrics_text(store::Database& db, const std::function<void(std::string_view)>& write) {
  auto read = TRY(read_metrics(db));
  Text text(write);
  write_totals(text, read);
  TRY(write_task_series(db, text));
  text.flush();
  return {};
}

Result<Metrics> read_metrics(store::Database& db) {
  Metrics metrics;
  metrics.ended = TRY(store::ended_runs_by_status(db));
  metrics.in_flight = TRY(store::runs_in_flight(db));
  metrics.lateness = TRY(store::start_lateness(db));
  metrics.queue = TRY(store::queue_depth_by_group(db));
  metrics.tasks = TRY(tasks_by_condition(db));
  metrics.history = TRY(store::history_size(db));
  metrics.successes = TRY(store::last_successes(db));
  auto scheduler = TRY(read_schedulers(db));
  metrics.heartbeat = scheduler.newest_heartbeat;
  if (auto tick = scheduler.newest_tick; tick && (!metrics.heartbeat || tick->at > *metrics.heartbeat))
    metrics.heartbeat = tick->at;
  return metrics;
}

}  // namespace taskd::ops
