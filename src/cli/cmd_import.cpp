#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

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

// What an import would do: the tasks, and the lines it cannot convert or
// converts with a difference the user should know.
struct ImportPlan {
  std::vector<Converted> tasks;
  std::vector<CrontabProblem> problems;

  std::size_t not_converted() const {
    return static_cast<std::size_t>(std::ranges::count(problems, ProblemKind::not_converted, &CrontabProblem::kind));
  }
};

// The entry's task; its environment moves into the task.
Result<core::Task> to_task(core::CrontabEntry& entry, const std::string& name, const std::string& owner,
                           core::Time now) {
  core::Task task;
  auto& d = task.definition;
  d.name = TRY(core::validate_task_name(name));
  d.command = core::crontab_command(entry);
  ScheduleOptions schedule;
  schedule.cron = entry.schedule;
  schedule.tz = entry.tz;
  task.schedule = TRY(apply_schedule(schedule, d, now));
  d.retry = core::default_retry_ladder();
  d.owner = owner;
  d.env = std::move(entry.env);
  TRY(require_utf8_text(d));
  task.state = core::on_create(*task.schedule, now, false);
  return task;
}

std::vector<core::Task> tasks_of(const ImportPlan& plan) {
  std::vector<core::Task> tasks;
  for (const auto& converted : plan.tasks) tasks.push_back(converted.task);
  return tasks;
}

Result<ImportPlan> plan_import(store::Database& db, core::Crontab& crontab, const std::string& owner, core::Time now) {
  ImportPlan plan{{}, crontab.problems};
  auto names = core::crontab_task_names(crontab.entries);
  std::string user = current_user();
  for (std::size_t i = 0; i < crontab.entries.size(); ++i) {
    auto& entry = crontab.entries[i];
    auto problem = [&](ProblemKind kind, std::string message) { plan.problems.push_back({entry.line, kind, message}); };
    auto task = to_task(entry, names[i], owner, now);
    if (!task) {
      problem(ProblemKind::not_converted, task.error().message);
      continue;
    }
    auto existing = TRY(ops::find_task(db, names[i]));
    if (existing) {
      problem(ProblemKind::not_converted, fmt::format("a task named \"{}\" already exists (owner \"{}\")", names[i],
                                                      existing->definition.owner));
      continue;
    }
    if (!entry.user.empty() && entry.user != user)
      problem(ProblemKind::note, fmt::format("cron runs this as {}; taskd runs it as the user who runs the scheduler "
                                             "({} now)",
                                             entry.user, user));
    plan.tasks.push_back({entry.line, std::move(*task)});
  }
  std::ranges::stable_sort(plan.problems, {}, &CrontabProblem::line);
  return plan;
}

std::string problem_text(const std::string& where, const CrontabProblem& problem, std::string_view not_converted) {
  auto kind = problem.kind == ProblemKind::note ? std::string_view("note") : not_converted;
  return fmt::format("{}:{}: {}: {}", where, problem.line, kind, problem.message);
}

void print_report(const std::string& where, const ImportPlan& plan, const std::string& owner, DryRun dry_run) {
  std::vector<std::pair<int, std::string>> lines;
  for (const auto& problem : plan.problems) lines.emplace_back(problem.line, problem_text(where, problem, "skipped"));
  for (const auto& [line, task] : plan.tasks) {
    lines.emplace_back(line,
                       fmt::format("{}:{}: {} {}: {}", where, line, dry_run == DryRun::yes ? "would add" : "added",
                                   task.definition.name, core::describe_schedule(task.definition)));
  }
  std::ranges::stable_sort(lines, {}, &std::pair<int, std::string>::first);
  for (const auto& [line, text] : lines) fmt::print("{}\n", core::printable(text));
  auto shown_owner = core::printable(owner);
  if (dry_run == DryRun::yes) {
    fmt::print("would import {} task(s) with owner {}; nothing was written (--dry-run)\n", plan.tasks.size(),
               shown_owner);
  } else {
    fmt::print("imported {} task(s) with owner {}; taskd rm --owner {} removes them\n", plan.tasks.size(), shown_owner,
               core::printable(shell_word(owner)));
  }
}

Json report_json(const ImportPlan& plan, const ImportOptions& options, const std::string& owner,
                 core::CrontabFormat format) {
  Json tasks = Json::array();
  for (const auto& [line, task] : plan.tasks) {
    Json out = task_json(task);
    out["line"] = line;
    tasks.push_back(out);
  }
  Json skipped = Json::array();
  Json notes = Json::array();
  for (const auto& problem : plan.problems) {
    auto& list = problem.kind == ProblemKind::note ? notes : skipped;
    list.push_back({{"line", problem.line}, {"message", problem.message}});
  }
  return {{"file", options.file}, {"format", format == core::CrontabFormat::system ? "system" : "user"},
          {"owner", owner},       {"dry_run", options.dry_run},
          {"tasks", tasks},       {"skipped", skipped},
          {"notes", notes}};
}

Result<void> import_crontab(const Context& context, const ImportOptions& options) {
  auto text = TRY(read_crontab(options.file));
  std::string where = options.file == "-" ? "<stdin>" : options.file;
  std::string owner = options.owner.empty() ? default_owner(options.file) : options.owner;
  auto reading = read_crontab_lines(options, text);
  // Planned on what is there, so that bad input creates no database.
  auto db = TRY(context.open_db(store::IfMissing::use_empty));
  core::Time now = context.clock.now();
  auto plan = TRY(plan_import(db, reading.crontab, owner, now));
  if (auto bad = plan.not_converted(); bad > 0 && !options.skip_bad) {
    for (const auto& problem : plan.problems)
      fmt::print(stderr, "{}\n", core::printable(problem_text(where, problem, "cannot convert")));
    return fail(ErrorKind::bad_input, fmt::format("import-crontab: {} line(s) of {} cannot be converted; nothing was "
                                                  "imported (--skip-bad imports the rest)",
                                                  bad, where));
  }
  if (!options.dry_run) {
    auto target = TRY(context.open_db(store::IfMissing::create));
    TRY(ops::add_tasks(target, tasks_of(plan), now));
  }
  if (context.json) {
    print_json(report_json(plan, options, owner, reading.format));
  } else {
    if (reading.format_guessed)
      fmt::print(
          "{}: read as a system crontab: every command starts with a user name (--user if they are "
          "commands)\n",
          core::printable(where));
    print_report(where, plan, owner, options.dry_run ? DryRun::yes : DryRun::no);
  }
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
  command->add_flag("--dry-run", options->dry_run, "Print what would be imported; write nothing");
  command->add_flag("--skip-bad", options->skip_bad, "Import the lines that convert and skip the others");
  command->callback(
      [&context, &action, options] { action = [&context, options] { return import_crontab(context, *options); }; });
}

}  // namespace taskd::cli
