#include <fmt/format.h>
#include <memory>
#include <thread>

#include "cli/context.hpp"
#include "cli/json.hpp"
#include "core/text.hpp"
#include "ops/run_once.hpp"
#include "sched/delivery.hpp"
#include "sched/retention.hpp"

namespace taskd::cli {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

struct RunOnceOptions {
  int concurrency = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string max_time;
  int keep_days = 0;
  std::string host_id;
  std::string lease;
  std::string containment;
};

bool is_failure(core::RunStatus status) {
  return status == core::RunStatus::failed || status == core::RunStatus::timed_out || status == core::RunStatus::lost;
}

Result<void> run_once(const Context& context, const RunOnceOptions& options) {
  if (options.concurrency < 1) return fail(ErrorKind::usage, "run-once: --concurrency must be at least 1");
  auto max_time = TRY(optional_duration(options.max_time, "--max-time"));
  auto retention = TRY(retention_of(options.keep_days));
  auto host_id = TRY(host_id_of(options.host_id));
  auto containment = TRY(containment_of(options.containment));
  auto db = TRY(context.open_db_to_run());
  auto lease = TRY(lease_of(options.lease, db));

  core::Time started = context.clock.now();
  sched::WorkerOptions worker;
  worker.concurrency = options.concurrency;
  worker.host_id = host_id;
  worker.lease = lease;
  if (max_time) worker.claim_until = started + *max_time;
  // Before the tick: what the runs of a taskd killed here left in their
  // cgroups is ended as the tree opens, whether this one runs anything.
  auto contained = TRY(exec::choose_containment(containment));
  auto tell_disabled = [](const sched::MalformedReport& disabled) {
    fmt::print(stderr, "taskd: task \"{}\" is malformed in the database, disabled and not run: {}\n",
               core::printable(disabled.task), disabled.problem);
  };
  auto worked = ops::tick_and_work(db, started, worker, std::move(contained), context.clock, tell_disabled);
  sched::drain_alerts(sched::alert_drain_limit);
  auto reports = TRY(std::move(worked));
  if (retention) {
    TRY(sched::prune_expired(db, started, *retention));
  }
  if (context.json) {
    print_json(ops::run_reports_json(reports));
    return {};
  }
  // Silent when all went well, as cron mails any output; printable, as a
  // reason is the last line a run wrote.
  for (const auto& report : reports) {
    auto task = core::printable(report.task);
    auto reason = core::printable(report.reason);
    if (report.stale) fmt::print(stderr, "taskd: run {} of {}: {}\n", report.run_id, task, reason);
    if (is_failure(report.status))
      fmt::print("taskd: {} run {} {}: {}\n", task, report.run_id, core::to_string(report.status), reason);
  }
  return {};
}

}  // namespace

void add_run_once_command(CLI::App& app, Context& context, Action& action) {
  auto options = std::make_shared<RunOnceOptions>();
  auto* command = app.add_subcommand("run-once", "One tick: queue what is due, run it, wait for it, exit");
  command->add_option("--concurrency", options->concurrency, "Runs at once (default: the number of cores)");
  command->add_option("--max-time", options->max_time, "Stop starting new runs after DUR");
  add_keep_days_option(*command, options->keep_days);
  add_host_id_option(*command, options->host_id);
  add_lease_option(*command, options->lease);
  add_containment_option(*command, options->containment);
  command->callback([&context, &action, options] { action = [&context, options] { return run_once(context, *options); }; });
}

}  // namespace taskd::cli
