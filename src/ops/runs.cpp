#include "ops/runs.hpp"

#include <charconv>
#include <fmt/format.h>
#include <thread>

#include "ops/tasks.hpp"

namespace taskd::ops {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

// The task named `name`: what can be read of it (its id and name at least),
// for the runs of a malformed row are shown as any others.
Result<core::Task> readable_task(store::Database& db, std::string_view name, std::string_view verb) {
  auto task = TRY(find_named_stored_task(db, name, verb));
  return store::readable(task);
}

// The run whose output `logs` shows: the one asked for, or the task's latest
// run that started.
Result<store::RunRecord> run_to_show(store::Database& db, const core::Task& task, std::int64_t run_id) {
  if (run_id != 0) {
    auto run = TRY(store::find_run(db, run_id));
    if (!run || run->task_id != task.id)
      return fail(ErrorKind::bad_input, fmt::format("logs: task \"{}\" has no run {}", task.definition.name, run_id));
    return *run;
  }
  auto runs = TRY(store::list_runs(db, task.id, 1000));
  for (const auto& run : runs) {
    if (run.started_at) return run;
  }
  return fail(ErrorKind::bad_input, fmt::format("logs: task \"{}\" has not run yet", task.definition.name));
}

// How often `logs --follow` looks at the run: output reaches the database a
// second behind at most, this adds little to it.
constexpr auto follow_period = std::chrono::milliseconds(300);

// The bytes the cut line at the start of `line` says were cut ("[taskd: 12
// bytes of output cut here]", "[taskd: 2.0 KiB (2048 bytes) of output cut
// here]"); none when it is no cut line.
std::optional<std::size_t> cut_bytes_of(std::string_view line) {
  constexpr std::string_view opening = "[taskd: ";
  if (!line.starts_with(opening) || !line.ends_with(" of output cut here]")) return std::nullopt;
  auto count = line.substr(opening.size());
  if (auto paren = count.find('('); paren != std::string_view::npos) count = count.substr(paren + 1);
  std::size_t bytes = 0;
  auto [end, error] = std::from_chars(count.data(), count.data() + count.size(), bytes);
  if (error != std::errc() || end == count.data()) return std::nullopt;
  return bytes;
}

// Where the cut line of a truncated output is: right after the head (after
// the newline that ends a head that did not end with one), or, should the
// head's length be off (the task's --keep-output changed during the run),
// the first one.
std::optional<std::size_t> cut_line_at(std::string_view stored, std::size_t head_bytes) {
  for (std::size_t at : {head_bytes, head_bytes + 1}) {
    auto end = stored.find('\n', at);
    if (at <= stored.size() && end != std::string_view::npos && cut_bytes_of(stored.substr(at, end - at))) return at;
  }
  for (auto at = stored.find("[taskd: "); at != std::string_view::npos; at = stored.find("[taskd: ", at + 1)) {
    auto end = stored.find('\n', at);
    if ((at == 0 || stored[at - 1] == '\n') && end != std::string_view::npos &&
        cut_bytes_of(stored.substr(at, end - at)))
      return at;
  }
  return std::nullopt;
}

}  // namespace

std::string output_after(std::string_view stored, bool truncated, std::size_t head_bytes, std::size_t& printed) {
  auto line = truncated ? cut_line_at(stored, head_bytes) : std::nullopt;
  if (!line) {
    // All that was written, in order.
    auto next = stored.substr(std::min(printed, stored.size()));
    printed = std::max(printed, stored.size());
    return std::string(next);
  }
  auto line_end = stored.find('\n', *line) + 1;
  auto head = stored.substr(0, std::min(head_bytes, *line));
  auto tail = stored.substr(line_end);
  std::size_t tail_from = head.size() + *cut_bytes_of(stored.substr(*line, line_end - 1 - *line));
  std::string next;
  if (printed < head.size()) {
    next = head.substr(printed);
    printed = head.size();
  }
  if (printed < tail_from) {
    if (!next.empty() && next.back() != '\n') next += '\n';
    next += std::string(stored.substr(*line, line_end - *line));
    printed = tail_from;
  }
  auto skip = std::min(printed - tail_from, tail.size());
  next += tail.substr(skip);
  printed = tail_from + tail.size();
  return next;
}

Result<void> for_each_run_of(store::Database& db, std::string_view name, store::RunFilter filter,
                             std::string_view verb, const store::RunVisitor& visit) {
  if (!name.empty()) filter.task_id = TRY(readable_task(db, name, verb)).id;
  bool any = false;
  TRY(store::for_each_run(db, filter, [&](const store::RunRecord& run) {
    any = true;
    return visit(run);
  }));
  // In a window the page after run `before` starts at its slot, which a
  // pruned run no longer has: its page would be empty, as if the last.
  bool windowed = filter.since || filter.until;
  if (!any && windowed && filter.before != 0 && !TRY(store::find_run(db, filter.before)))
    return fail(ErrorKind::bad_input,
                fmt::format("before={0}: run {0} is no longer in the history (pruned): ask for the first page again",
                            filter.before));
  return {};
}

Result<RunOutput> run_output(store::Database& db, std::string_view name, std::int64_t run_id) {
  auto task = TRY(readable_task(db, name, "logs"));
  auto run = TRY(run_to_show(db, task, run_id));
  auto output = TRY(store::run_output(db, run.id));
  return RunOutput{.run = std::move(run), .output = std::move(output)};
}

Result<std::optional<RunOutput>> find_run_output(store::Database& db, std::int64_t run_id) {
  auto run = TRY(store::find_run(db, run_id));
  if (!run) return std::nullopt;
  auto output = TRY(store::run_output(db, run->id));
  return RunOutput{.run = std::move(*run), .output = std::move(output)};
}

Result<void> follow_run_output(store::Database& db, std::string_view name, std::int64_t run_id,
                               const std::function<void(std::string_view)>& print) {
  auto task = TRY(readable_task(db, name, "logs"));
  auto run = TRY(run_to_show(db, task, run_id));
  auto head_bytes = static_cast<std::size_t>(task.definition.keep_output) / 4;
  std::size_t printed = 0;
  while (true) {
    auto stored = TRY(store::stored_output(db, run.id));
    if (!stored) return {};  // deleted while followed (removed with its task)
    print(output_after(stored->output, stored->truncated, head_bytes, printed));
    if (stored->status != core::RunStatus::queued && stored->status != core::RunStatus::running) return {};
    std::this_thread::sleep_for(follow_period);
  }
}

Json run_output_json(const RunOutput& shown) {
  Json out = run_json(shown.run);
  out["output"] = shown.output;
  return out;
}

}  // namespace taskd::ops
