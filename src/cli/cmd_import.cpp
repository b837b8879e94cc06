#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pwd.h>
#include <unistd.h>

#include <map>
#include <memory>

#include "cli/context.hpp"
#include "cli/format.hpp"
#include "cli/input_file.hpp"
#include "cli/json.hpp"
#include "cli/schedule_options.hpp"
#include "cli/task_options.hpp"
#include "core/crontab.hpp"
#include "core/policy.hpp"
#include "core/text.hpp"
#include "exec/process_identity.hpp"
#include "ops/define.hpp"
#include "ops/tasks.hpp"

namespace taskd::cli {
namespace {

namespace fs = std::filesystem;
using core::CrontabProblem;
using core::ErrorKind;
using core::fail;
using core::ProblemKind;
using core::Result;

struct ImportOptions {
  std::string file = "-";
  std::string owner;
  bool system = false;
  bool user = false;
  bool dry_run = false;
  bool skip_bad = false;
};

Result<std::string> read_crontab(const std::string& file) {
  if (file == "-") {
    if (::isatty(STDIN_FILENO))
      return fail(ErrorKind::usage,
                  "import-crontab: give a FILE, or pipe a crontab in: crontab -l | taskd import-crontab -");
    return read_standard_input();
  }
  return read_input_file(file);
}

bool is_system_path(const std::string& file) {
  if (file == "-") return false;
  auto path = fs::absolute(file).lexically_normal();
  return path == "/etc/crontab" || path.parent_path() == "/etc/cron.d";
}

bool is_user_account(const std::string& name) { return ::getpwnam(name.c_str()) != nullptr; }

// A user name and then a command, in every line.
bool every_command_starts_with_a_user(const core::Crontab& crontab) {
  return !crontab.entries.empty() && std::ranges::all_of(crontab.entries, [](const core::CrontabEntry& entry) {
    auto blank = entry.command.find_first_of(" \t");
    return blank != std::string::npos && is_user_account(entry.command.substr(0, blank));
  });
}

struct Reading {
  core::Crontab crontab;
  core::CrontabFormat format = core::CrontabFormat::user;
  bool format_guessed = false;  // a system crontab by its shape
};

Reading read_as(std::string_view text, core::CrontabFormat format, bool guessed = false) {
  return {core::parse_crontab(text, format), format, guessed};
}

// /etc/crontab and /etc/cron.d/* have a user field, other crontabs do not,
// unless every command starts with a user's name: then it is a copy of a
// system crontab. --system and --user decide instead.
Reading read_crontab_lines(const ImportOptions& options, std::string_view text) {
  if (options.user) return read_as(text, core::CrontabFormat::user);
  if (options.system || is_system_path(options.file)) return read_as(text, core::CrontabFormat::system);
  auto as_user = read_as(text, core::CrontabFormat::user);
  if (!every_command_starts_with_a_user(as_user.crontab)) return as_user;
  return read_as(text, core::CrontabFormat::system, true);
}

std::string default_owner(const std::string& file) {
  return "crontab:" + (file == "-" ? file : fs::absolute(file).lexically_normal().string());
}

std::string current_user() {
  const passwd* entry = ::getpwuid(::geteuid());
  return entry ? entry->pw_name : std::to_string(::geteuid());
}

struct Converted {
  int line = 0;
  core::Task task;
};

// What the lines of a crontab convert to: the tasks, and the lines that
// cannot convert or convert with a difference the user should know.
struct Conversion {
  std::vector<Converted> tasks;
  std::vector<CrontabProblem> problems;

  std::size_t not_converted() const {
    return static_cast<std::size_t>(std::ranges::count(problems, ProblemKind::not_converted, &CrontabProblem::kind));
  }
};

// The entry's task, which keeps cron's behaviour: no retries, no timebox,
// and no exit code that disables it. Its environment moves into the task,
// and so does the user of a system crontab's line (--user), unless it is
// `importing_user`, whom the scheduler runs it as anyway. MAILTO becomes
// its --mail-to. What cron has no word for it takes from the defaults:
// where alerts go (the mail too without MAILTO), the history kept, and its
// zone unless the crontab sets CRON_TZ.
Result<core::Task> to_task(core::CrontabEntry& entry, const std::string& name, const std::string& owner,
                           const std::string& importing_user, core::Time now) {
  core::Task task;
  auto& d = task.definition;
  d.name = TRY(core::validate_task_name(name));
  d.command = core::crontab_command(entry);
  ScheduleOptions schedule;
  schedule.cron = entry.schedule;
  schedule.tz = entry.tz;
  task.schedule = TRY(apply_schedule(schedule, d, now));
  d.retry.clear();
  d.timeout = core::Seconds{0};
  d.permanent_exit.clear();
  d.owner = owner;
  d.env = std::move(entry.env);
  d.user = TRY(core::crontab_run_as(entry, importing_user));
  d.from_defaults = {"notify_url", "notify_format", "notify", "keep_runs"};
  if (entry.mail_to) {
    d.mail_to = *entry.mail_to;
  } else {
    d.from_defaults.emplace_back("mail_to");
  }
  if (entry.tz.empty()) d.from_defaults.emplace_back("tz");
  TRY(require_utf8_text(d));
  task.state = core::on_create(*task.schedule, now, false);
  return task;
}

// A task of that name that another owner has is not the import's to change.
std::optional<std::string> taken_by_another_owner(const std::optional<core::Task>& existing, const std::string& owner) {
  if (!existing || existing->definition.owner == owner) return std::nullopt;
  return fmt::format("a task named \"{}\" already exists (owner \"{}\")", existing->definition.name,
                     existing->definition.owner);
}

Result<Conversion> convert(store::Database& db, core::Crontab& crontab, const std::string& owner, core::Time now) {
  Conversion conversion{{}, crontab.problems};
  auto names = core::crontab_task_names(crontab.entries);
  std::string user = current_user();
  for (std::size_t i = 0; i < crontab.entries.size(); ++i) {
    auto& entry = crontab.entries[i];
    auto problem = [&](ProblemKind kind, std::string message) {
      conversion.problems.push_back({entry.line, kind, message});
    };
    auto task = to_task(entry, names[i], owner, user, now);
    if (!task) {
      problem(ProblemKind::not_converted, task.error().message);
      continue;
    }
    if (auto taken = taken_by_another_owner(TRY(ops::find_task(db, names[i])), owner)) {
      problem(ProblemKind::not_converted, *taken);
      continue;
    }
    if (core::runs_at_boot(task->definition) && !db.file()) {
      // A crontab is a machine's: its @reboot line runs after that machine's boots.
      task->definition.on_host = exec::host_name();
      problem(ProblemKind::note, fmt::format("@reboot: runs after the boots of this host, as --on-host {}",
                                             task->definition.on_host));
    }
    conversion.tasks.push_back({entry.line, std::move(*task)});
  }
  std::ranges::stable_sort(conversion.problems, {}, &CrontabProblem::line);
  return conversion;
}

// The crontab as apply --prune sees a task file: its tasks made to exist as
// converted, the owner's tasks whose lines are gone removed, history kept.
ops::ApplyArgs import_args(const Conversion& conversion, const std::string& owner, bool dry_run) {
  ops::ApplyArgs args{.owner = owner, .prune = true, .dry_run = dry_run};
  for (const auto& converted : conversion.tasks) {
    const auto& task = converted.task;
    args.tasks.push_back(
        {.name = task.definition.name,
         .build = [&task, &owner](const std::optional<core::Task>& existing, core::Time) -> Result<core::Task> {
           // Taken since the conversion looked: the import writes nothing.
           if (auto taken = taken_by_another_owner(existing, owner))
             return fail(ErrorKind::bad_input, "import-crontab: " + *taken);
           return task;
         }});
  }
  return args;
}

// What the import did (or would do) to each converted line's task.
struct LineStep {
  std::string_view action;  // add, change, unchanged
  std::vector<std::string> fields;
};

std::map<std::string, LineStep> steps_by_name(const ops::Plan& plan) {
  std::map<std::string, LineStep> steps;
  for (const auto& step : plan.tasks) {
    if (step.kind != ops::Step::remove) steps[step.definition.name] = {ops::names_of(step.kind).action, step.fields};
  }
  return steps;
}

LineStep step_of(const std::map<std::string, LineStep>& steps, const core::Task& task) {
  auto found = steps.find(task.definition.name);
  return found == steps.end() ? LineStep{"unchanged", {}} : found->second;
}

std::vector<std::string> removed_names(const ops::Plan& plan) {
  std::vector<std::string> names;
  for (const auto& step : plan.tasks) {
    if (step.kind == ops::Step::remove) names.push_back(step.definition.name);
  }
  return names;
}

struct ImportOutcome {
  Conversion conversion;
  ops::Plan plan;
  bool written = false;  // false: a dry run
};

std::string problem_text(const std::string& where, const CrontabProblem& problem, std::string_view not_converted) {
  auto kind = problem.kind == ProblemKind::note ? std::string_view("note") : not_converted;
  return fmt::format("{}:{}: {}: {}", where, problem.line, kind, problem.message);
}

std::string step_text(const LineStep& step, const core::Task& task, bool written) {
  const auto& name = task.definition.name;
  if (step.action == "add")
    return fmt::format("{} {}: {}", written ? "added" : "would add", name, core::describe_schedule(task.definition));
  if (step.action == "change")
    return fmt::format("{} {}: {}", written ? "changed" : "would change", name, fmt::join(step.fields, ", "));
  return fmt::format("unchanged {}", name);
}

void print_report(const std::string& where, const ImportOutcome& outcome, const std::string& owner, bool skip_bad) {
  const auto& conversion = outcome.conversion;
  auto steps = steps_by_name(outcome.plan);
  std::vector<std::pair<int, std::string>> lines;
  auto not_converted = skip_bad ? std::string_view("skipped") : std::string_view("cannot convert");
  for (const auto& problem : conversion.problems)
    lines.emplace_back(problem.line, problem_text(where, problem, not_converted));
  for (const auto& [line, task] : conversion.tasks)
    lines.emplace_back(line,
                       fmt::format("{}:{}: {}", where, line, step_text(step_of(steps, task), task, outcome.written)));
  std::ranges::stable_sort(lines, {}, &std::pair<int, std::string>::first);
  for (const auto& [line, text] : lines) fmt::print("{}\n", core::printable(text));
  for (const auto& name : removed_names(outcome.plan))
    fmt::print("{}: {} {}: its line is gone\n", core::printable(where), outcome.written ? "removed" : "would remove",
               core::printable(name));
  if (!conversion.tasks.empty())
    fmt::print(
        "as in cron: no retries, no timebox, and no exit code disables a task; unlike cron: a time that comes "
        "while the task's previous run is still running is skipped (overlap=skip)\n");
  auto shown_owner = core::printable(owner);
  if (outcome.written) {
    fmt::print("imported {} task(s) with owner {} ({}); taskd rm --owner {} removes them\n", conversion.tasks.size(),
               shown_owner, ops::counts_text(outcome.plan), core::printable(shell_word(owner)));
  } else {
    fmt::print("would import {} task(s) with owner {} ({}); nothing was written (--dry-run)\n", conversion.tasks.size(),
               shown_owner, ops::counts_text(outcome.plan));
  }
}

Json report_json(const ImportOutcome& outcome, const ImportOptions& options, const std::string& owner,
                 core::CrontabFormat format) {
  auto steps = steps_by_name(outcome.plan);
  Json tasks = Json::array();
  for (const auto& [line, task] : outcome.conversion.tasks) {
    Json out = task_json(task);
    auto step = step_of(steps, task);
    out["line"] = line;
    out["action"] = step.action;
    out["fields"] = step.fields;
    tasks.push_back(out);
  }
  Json skipped = Json::array();
  Json notes = Json::array();
  for (const auto& problem : outcome.conversion.problems) {
    auto& list = problem.kind == ProblemKind::note ? notes : skipped;
    list.push_back({{"line", problem.line}, {"message", problem.message}});
  }
  return {{"file", options.file}, {"format", format == core::CrontabFormat::system ? "system" : "user"},
          {"owner", owner},       {"dry_run", options.dry_run},
          {"tasks", tasks},       {"removed", removed_names(outcome.plan)},
          {"skipped", skipped},   {"notes", notes}};
}

// Converts the lines, then plans the import as apply --prune plans a task
// file, and carries it out unless a dry run or lines that cannot convert
// (without --skip-bad) stop it.
Result<ImportOutcome> run_import(const Context& context, const ImportOptions& options, core::Crontab& crontab,
                                 const std::string& owner, const std::string& where) {
  // Converted on what is there, so that bad input creates no database.
  auto db = TRY(context.open_db(store::IfMissing::use_empty));
  auto conversion = TRY(convert(db, crontab, owner, context.clock.now()));
  bool stopped = conversion.not_converted() > 0 && !options.skip_bad;
  if (stopped && !options.dry_run) {
    for (const auto& problem : conversion.problems)
      fmt::print(stderr, "{}\n", core::printable(problem_text(where, problem, "cannot convert")));
    return fail(ErrorKind::bad_input, fmt::format("import-crontab: {} line(s) of {} cannot be converted; nothing was "
                                                  "imported (--skip-bad imports the rest)",
                                                  conversion.not_converted(), where));
  }
  auto args = import_args(conversion, owner, options.dry_run);
  if (options.dry_run) return ImportOutcome{std::move(conversion), TRY(ops::apply(db, args, context.clock)), false};
  auto target = TRY(context.open_db(store::IfMissing::create));
  return ImportOutcome{std::move(conversion), TRY(ops::apply(target, args, context.clock)), true};
}

Result<void> import_crontab(const Context& context, const ImportOptions& options) {
  auto text = TRY(read_crontab(options.file));
  std::string where = options.file == "-" ? "<stdin>" : options.file;
  std::string owner = options.owner.empty() ? default_owner(options.file) : options.owner;
  auto reading = read_crontab_lines(options, text);
  auto outcome = TRY(run_import(context, options, reading.crontab, owner, where));
  for (const auto& [line, task] : outcome.conversion.tasks) warn_if_cannot_switch_user(task.definition, outcome.plan.schedulers);
  if (context.json) {
    print_json(report_json(outcome, options, owner, reading.format));
  } else {
    if (reading.format_guessed)
      fmt::print(
          "{}: read as a system crontab: every command starts with a user name (--user if they are "
          "commands)\n",
          core::printable(where));
    print_report(where, outcome, owner, options.skip_bad);
  }
  // A dry run shows the whole plan, and still says that the import would fail.
  if (auto bad = outcome.conversion.not_converted(); bad > 0 && !options.skip_bad)
    return fail(ErrorKind::bad_input, fmt::format("import-crontab: {} line(s) of {} cannot be converted; the import "
                                                  "would write nothing (--skip-bad imports the rest)",
                                                  bad, where));
  return {};
}

}  // namespace

void add_import_command(CLI::App& app, Context& context, Action& action) {
  auto options = std::make_shared<ImportOptions>();
  auto* command = app.add_subcommand("import-crontab", "Turn the lines of a crontab into tasks with --cron schedules");
  command->add_option("file", options->file,
                      "The crontab (default -: standard input, e.g. crontab -l | taskd import-crontab)");
  auto* system =
      command->add_flag("--system", options->system,
                        "The lines have a user field, as in /etc/crontab and /etc/cron.d (default: guessed)");
  command->add_flag("--user", options->user, "The lines have no user field, as in crontab -l (default: guessed)")
      ->excludes(system);
  command->add_option("--owner", options->owner, "Owner of the tasks (default crontab:ABSOLUTE-PATH)");
  command->add_flag("--dry-run", options->dry_run, "Print what would be added, changed and removed; write nothing");
  command->add_flag("--skip-bad", options->skip_bad, "Import the lines that convert and skip the others");
  command->callback(
      [&context, &action, options] { action = [&context, options] { return import_crontab(context, *options); }; });
}

}  // namespace taskd::cli
