#include <fmt/format.h>
#include <memory>
#include <thread>

#include "cli/context.hpp"
#include "cli/json.hpp"
#include "core/text.hpp"
#include "exec/supervisor.hpp"
#include "sched/presence.hpp"
#include "sched/recovery.hpp"
#include "sched/tick.hpp"
#include "sched/worker.hpp"
#include "store/tasks.hpp"

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

// Every run that ended, failed or not.
void print_reports_json(const std::vector<sched::RunReport>& reports) {
  Json out = Json::array();
  for (const auto& report : reports)
    out.push_back({{"id", report.run_id}, {"task", report.task}, {"status", core::to_string(report.status)},
                   {"reason", report.reason}});
  print_json(out);
}

// The tick at `started`: recovers lost runs, queues what is due, runs what
// is queued and waits for it; every run that ended, the lost ones first. A
// due task whose row is malformed is disabled, and told on stderr.
// Only what the probe finds work for is read or locked: with no task due
// and no run running or claimable, at most the workers' rows are checked.
Result<std::vector<sched::RunReport>> tick(const Context& context, store::Database& db, core::Time started,
                                           const sched::WorkerOptions& worker, exec::ContainmentChoice contained) {
  auto self = sched::current_worker(worker.host_id);
  TRY(sched::check_host_id_free(db, self, started));
  auto work = TRY(store::tick_work(db, started));
  auto lost = TRY(sched::recover_as_probed(db, work, started, self, sched::SystemProcessTable{}));
  if (!sched::enqueue_needed(work) && !work.claimable) return lost;
  auto ticked = TRY(sched::enqueue_due(db, started));
  for (const auto& [task, problem] : ticked.disabled)
    fmt::print(stderr, "taskd: task \"{}\" is malformed in the database, disabled and not run: {}\n",
               core::printable(task), problem);
  exec::Supervisor supervisor(std::move(contained), worker.lease);
  auto reports = TRY(sched::work_until_idle(db, context.clock, supervisor, worker));
  reports.insert(reports.begin(), lost.begin(), lost.end());
  return reports;
}

Result<void> run_once(const Context& context, const RunOnceOptions& options) {
  if (options.concurrency < 1) return fail(ErrorKind::usage, "run-once: --concurrency must be at least 1");
  auto max_time = TRY(optional_duration(options.max_time, "--max-time"));
  auto retention = TRY(retention_of(options.keep_days));
  auto host_id = TRY(host_id_of(options.host_id));
  auto containment = TRY(containment_of(options.containment));
  auto db = TRY(context.open_db(store::IfMissing::create));
  TRY(store::check_safe_to_run(db));
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
  auto reports = TRY(tick(context, db, started, worker, std::move(contained)));
  if (retention) {
    TRY(sched::prune_expired(db, started, *retention));
  }
  if (context.json) {
    print_reports_json(reports);
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
