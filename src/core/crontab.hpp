#pragma once
// Crontab files as crontab(5) describes them: a user's crontab, or a system
// one (/etc/crontab, /etc/cron.d/*) with a user field after the five time
// fields. Pure: text in, entries and problems out, each with its line number.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/task.hpp"

namespace taskd::core {

enum class CrontabFormat { user, system };

// A cron command line that taskd can run.
struct CrontabEntry {
  int line = 0;
  std::string schedule;  // the five time fields, or an @alias
  std::string user;      // the system format's user field
  // The shell line up to the first unescaped %, with each \% made a %.
  std::string command;
  // What follows that %, with % made a newline: the command's stdin.
  std::optional<std::string> input;
  std::string shell = "/bin/sh";  // $SHELL as set above the line
  std::string tz;                 // CRON_TZ as set above the line; empty: the local zone
  std::vector<EnvVar> env;        // the assignments above the line (the last one of a name wins)
  // MAILTO as set above the line, when it is addresses taskd mails (--mail-to);
  // "" for MAILTO="" or one taskd cannot mail; none where no MAILTO is set.
  std::optional<std::string> mail_to;
};

enum class ProblemKind {
  not_converted,  // the line becomes no task
  note,           // converted or ignored, but taskd behaves differently from cron
};

struct CrontabProblem {
  int line = 0;
  ProblemKind kind = ProblemKind::not_converted;
  std::string message;
};

struct Crontab {
  std::vector<CrontabEntry> entries;
  std::vector<CrontabProblem> problems;
};

// The most environment, counted as execve(2) counts it, that the entries of
// one crontab carry in all. Each entry gets its own copy of the variables set
// above it, so N variables and N entries would otherwise take N*N/2 copies; a
// real crontab carries a few kilobytes.
inline constexpr std::size_t max_carried_environment = std::size_t{16} << 20;

// Reads a crontab. Environment lines (NAME = VALUE, the value optionally in
// matching quotes) apply to the entries below them; SHELL picks the shell,
// CRON_TZ the zone, MAILTO and MAILFROM are reported (taskd sends no mail);
// @reboot lines become tasks of --cron @reboot; malformed lines and the
// entries past max_carried_environment are reported as not converted.
Crontab parse_crontab(std::string_view text, CrontabFormat format);

// The command of the entry's task: the shell line run by the entry's shell,
// with `printf` feeding it the entry's input (taskd children read /dev/null).
Command crontab_command(const CrontabEntry& entry);

// The --user of the entry's task: the system format's user field, so that
// it runs as under cron, unless it is `importing_user`, whom the scheduler
// runs it as anyway (empty: no --user). An error when the field is not a
// user name that --user takes.
Result<std::string> crontab_run_as(const CrontabEntry& entry, std::string_view importing_user);

// One task name per entry, in order: from the words of the command's main
// program (its first part that is not cd, test, [ or true, without
// redirections and paths), valid for validate_task_name; a name met again
// gets -2, -3 and so on. The same crontab always gives the same names.
std::vector<std::string> crontab_task_names(const std::vector<CrontabEntry>& entries);

}  // namespace taskd::core
