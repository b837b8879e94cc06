#include "core/crontab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <unordered_map>
#include <unordered_set>

#include "core/cron.hpp"
#include "core/mail.hpp"
#include "core/task.hpp"
#include "core/text.hpp"
#include "core/zone.hpp"

namespace taskd::core {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string_view skip_blanks(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  return text;
}

std::string_view trim_trailing_blanks(std::string_view text) {
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

// The next blank-separated word of `rest`, which moves past it.
std::string_view next_word(std::string_view& rest) {
  rest = skip_blanks(rest);
  auto end = std::min(rest.size(), static_cast<std::size_t>(std::ranges::find_if(rest, is_blank) - rest.begin()));
  auto word = rest.substr(0, end);
  rest.remove_prefix(end);
  return word;
}

bool is_quote(char c) { return c == '\'' || c == '"'; }

struct Quoted {
  std::string_view content;
  std::string_view after;
};

// The quoted text `text` starts with; none when the quote does not close.
std::optional<Quoted> quoted(std::string_view text) {
  auto close = text.find(text.front(), 1);
  if (close == std::string_view::npos) return std::nullopt;
  return Quoted{text.substr(1, close - 1), text.substr(close + 1)};
}

bool is_env_name(std::string_view name) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  return !name.empty() && letter(name.front()) &&
         std::ranges::all_of(name, [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

struct Assignment {
  std::string name;
  std::string value;
};

// An environment line, "name = value" (crontab(5)); none when the line is
// not one, an error when its quoted value does not close.
std::optional<Result<Assignment>> parse_assignment(std::string_view line) {
  auto rest = skip_blanks(line);
  if (rest.empty()) return std::nullopt;
  std::string_view name;
  if (is_quote(rest.front())) {
    auto q = quoted(rest);
    if (!q) return std::nullopt;
    name = q->content;
    rest = q->after;
  } else {
    auto end = std::min(rest.find_first_of(" \t="), rest.size());
    name = rest.substr(0, end);
    rest.remove_prefix(end);
  }
  rest = skip_blanks(rest);
  if (name.empty() || !rest.starts_with('=')) return std::nullopt;
  auto value = trim_trailing_blanks(skip_blanks(rest.substr(1)));
  if (value.empty() || !is_quote(value.front()))
    return Result<Assignment>(Assignment{std::string(name), std::string(value)});
  auto q = quoted(value);
  if (!q || !skip_blanks(q->after).empty())
    return Result<Assignment>(fail(ErrorKind::bad_input, fmt::format("{}: the quoted value does not end with its "
                                                                     "closing {}",
                                                                     name, value.front())));
  return Result<Assignment>(Assignment{std::string(name), std::string(q->content)});
}

struct UntilPercent {
  std::string text;                      // with each \% made a %
  std::optional<std::string_view> rest;  // after the first unescaped %, if there is one
};

UntilPercent copy_until_percent(std::string_view text) {
  UntilPercent out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '%') {
      out.text += '%';
      ++i;
    } else if (text[i] == '%') {
      out.rest = text.substr(i + 1);
      return out;
    } else {
      out.text += text[i];
    }
  }
  return out;
}

// crontab(5): the first unescaped % ends the command; the rest, with every
// other unescaped % made a newline, is its standard input.
void split_at_percent(std::string_view text, CrontabEntry& entry) {
  auto command = copy_until_percent(text);
  entry.command = command.text;
  if (!command.rest) return;
  std::string input;
  for (auto part = copy_until_percent(*command.rest);; part = copy_until_percent(*part.rest)) {
    input += part.text;
    if (!part.rest) break;
    input += '\n';
  }
  entry.input = input;
}

// What a variable adds to an environment as execve(2) counts it: its
// NAME=VALUE string, that string's terminating null byte and a pointer to it.
std::size_t environment_bytes(const EnvVar& variable) {
  return variable.first.size() + 1 + variable.second.size() + 1 + sizeof(char*);
}

// The variables of the environment lines read so far, in the order of their
// first assignment, and their size.
class Environment {
 public:
  void set(const Assignment& assignment) {
    auto [place, added] = index_.try_emplace(assignment.name, variables_.size());
    if (added) {
      variables_.emplace_back(assignment.name, assignment.value);
    } else {
      bytes_ -= environment_bytes(variables_[place->second]);
      variables_[place->second].second = assignment.value;
    }
    bytes_ += environment_bytes(variables_[place->second]);
  }
  const std::vector<EnvVar>& variables() const { return variables_; }
  std::size_t bytes() const { return bytes_; }

 private:
  std::vector<EnvVar> variables_;
  std::unordered_map<std::string, std::size_t> index_;  // a name's place in variables_
  std::size_t bytes_ = 0;
};

// The settings of the environment lines read so far.
struct Settings {
  Environment env;
  std::string shell = "/bin/sh";
  std::string tz;
  std::optional<std::string> mail_to;
};

// MAILTO: cron mails each run's output there; taskd mails the changes
// --notify is told of (--mail-to), an address with an '@' only.
CrontabProblem mail_to_note(Settings& settings, const std::string& value, int line) {
  auto note = [&](std::string message) { return CrontabProblem{line, ProblemKind::note, std::move(message)}; };
  settings.mail_to = parse_mail_to(value) ? value : "";
  if (value.empty()) return note("MAILTO=\"\": no mail, as with cron");
  if (settings.mail_to->empty())
    return note(fmt::format("MAILTO={}: not mailed: taskd mails only addresses with an @ (--mail-to)", value));
  return note(fmt::format("MAILTO={}: mailed when a task fails, recovers or is disabled (--mail-to), not each run's "
                          "output",
                          value));
}

// Applies an environment line; returns what the user should know about it.
std::optional<CrontabProblem> apply_assignment(Settings& settings, const Assignment& assignment, int line) {
  const auto& [name, value] = assignment;
  auto note = [&](std::string message) { return CrontabProblem{line, ProblemKind::note, std::move(message)}; };
  if (name == "MAILTO") return mail_to_note(settings, value, line);
  if (name == "MAILFROM")
    return note(fmt::format("MAILFROM={}: not applied; taskd's mail is from the scheduler's user", value));
  if (name == "RANDOM_DELAY")
    return note(fmt::format("RANDOM_DELAY={}: not applied; taskd add --jitter spreads runs instead", value));
  if (name == "CRON_TZ") {
    if (!find_zone(value))
      return CrontabProblem{line, ProblemKind::not_converted, fmt::format("CRON_TZ={}: unknown time zone", value)};
    settings.tz = value;
    return std::nullopt;
  }
  if (!is_env_name(name))
    return CrontabProblem{line, ProblemKind::not_converted,
                          fmt::format("\"{}\" is not an environment variable name (letters, digits and _)", name)};
  if (name == "SHELL") settings.shell = value;
  settings.env.set(assignment);
  return std::nullopt;
}

Result<CrontabEntry> parse_entry(std::string_view line, CrontabFormat format, const Settings& settings) {
  CrontabEntry entry;
  auto rest = skip_blanks(line);
  if (rest.starts_with('@')) {
    entry.schedule = next_word(rest);
  } else {
    for (int field = 0; field < 5; ++field) {
      auto word = next_word(rest);
      if (word.empty())
        return fail(ErrorKind::bad_input, "expected five time fields (minute hour day month weekday) and a command");
      entry.schedule += (field == 0 ? "" : " ") + std::string(word);
    }
  }
  if (entry.schedule != at_boot_spec) TRY(parse_cron(entry.schedule, "crontab"));
  if (format == CrontabFormat::system) {
    entry.user = next_word(rest);
    if (entry.user.empty())
      return fail(ErrorKind::bad_input, "expected a user name after the time fields (a system crontab)");
  }
  split_at_percent(skip_blanks(rest), entry);
  if (trim_trailing_blanks(entry.command).empty()) return fail(ErrorKind::bad_input, "no command");
  entry.shell = settings.shell;
  entry.tz = settings.tz;
  entry.mail_to = settings.mail_to;
  return entry;
}

Error too_much_environment(const Environment& env) {
  return {ErrorKind::bad_input,
          fmt::format("the {} variable(s) set above this line ({} bytes) would bring the environment copied into "
                      "the tasks of this crontab past {} MiB in all (each task keeps a copy of them)",
                      env.variables().size(), env.bytes(), max_carried_environment >> 20)};
}

bool is_comment_or_blank(std::string_view line) {
  auto rest = skip_blanks(line);
  return rest.empty() || rest.starts_with('#');
}

std::string shell_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// -- task names ------------------------------------------------------------

struct ShellToken {
  std::string text;
  bool is_operator = false;
};

bool is_operator_char(char c) { return std::string_view(";&|()<>").find(c) != std::string_view::npos; }

bool all_digits(std::string_view text) {
  return !text.empty() && std::ranges::all_of(text, [](char c) { return c >= '0' && c <= '9'; });
}

// The words and operators of a shell line: enough to name it, not to run it.
std::vector<ShellToken> shell_tokens(std::string_view line) {
  std::vector<ShellToken> tokens;
  std::string word;
  bool in_word = false;
  auto end_word = [&] {
    if (in_word) tokens.push_back({word, word == "{" || word == "}" || word == "!"});
    word.clear();
    in_word = false;
  };
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (is_quote(c)) {
      auto close = std::min(line.find(c, i + 1), line.size());
      word += line.substr(i + 1, close - i - 1);
      in_word = true;
      i = close;
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
      in_word = true;
    } else if (is_operator_char(c)) {
      if ((c == '<' || c == '>') && all_digits(word)) in_word = false;  // a file descriptor: 2>&1
      end_word();
      std::size_t end = i;
      while (end < line.size() && is_operator_char(line[end])) ++end;
      tokens.push_back({std::string(line.substr(i, end - i)), true});
      i = end - 1;
    } else if (is_blank(c) || c == '\n') {
      end_word();
    } else {
      word += c;
      in_word = true;
    }
  }
  end_word();
  return tokens;
}

bool is_redirection(const ShellToken& token) {
  return token.is_operator && (token.text.front() == '<' || token.text.front() == '>');
}

bool is_assignment(std::string_view word) {
  auto equals = word.find('=');
  return equals != std::string_view::npos && is_env_name(word.substr(0, equals));
}

// The simple commands of a shell line, each as its words without
// redirections and leading assignments.
std::vector<std::vector<std::string>> simple_commands(std::string_view line) {
  std::vector<std::vector<std::string>> commands(1);
  bool skip_target = false;
  for (const auto& token : shell_tokens(line)) {
    if (is_redirection(token)) {
      skip_target = true;
    } else if (token.is_operator) {
      if (!commands.back().empty()) commands.emplace_back();
    } else if (!std::exchange(skip_target, false) && !(commands.back().empty() && is_assignment(token.text))) {
      commands.back().push_back(token.text);
    }
  }
  return commands;
}

// The command that says what a line does: the first one that is not a
// guard or a change of directory.
std::vector<std::string> main_command(std::string_view line) {
  constexpr std::array<std::string_view, 6> helpers{"cd", "test", "[", "[[", "true", ":"};
  auto commands = simple_commands(line);
  for (const auto& command : commands) {
    if (!command.empty() && std::ranges::find(helpers, command.front()) == helpers.end()) return command;
  }
  return commands.front();
}

constexpr std::size_t name_length = 48;

std::string trim_dashes_and_dots(std::string_view text) {
  auto first = text.find_first_not_of("-.");
  if (first == std::string_view::npos) return "";
  return std::string(text.substr(first, text.find_last_not_of("-.") - first + 1));
}

std::string_view last_path_part(std::string_view word) {
  while (word.size() > 1 && word.back() == '/') word.remove_suffix(1);
  if (auto slash = word.rfind('/'); slash != std::string_view::npos) word.remove_prefix(slash + 1);
  return word;
}

// The words' runs of letters, digits and dots, joined by dashes; of a path
// only its last part.
std::string slug(const std::vector<std::string>& words) {
  std::string out;
  std::string run;
  auto end_run = [&] {
    auto part = trim_dashes_and_dots(run);
    if (!part.empty()) out += (out.empty() ? "" : "-") + part;
    run.clear();
  };
  for (const auto& word : words) {
    for (char c : last_path_part(word)) {
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.') {
        run += c;
      } else {
        end_run();
      }
    }
    end_run();
  }
  if (out.size() > name_length) {
    bool cut_at_word_end = out[name_length] == '-';
    out.resize(name_length);
    auto dash = out.rfind('-');
    if (!cut_at_word_end && dash != std::string::npos && dash > name_length / 2) out.resize(dash);
  }
  out = trim_dashes_and_dots(out);
  return out.empty() ? "cron" : out;
}

}  // namespace

Crontab parse_crontab(std::string_view text, CrontabFormat format) {
  Crontab crontab;
  Settings settings;
  std::size_t carried = 0;  // the environment bytes of the entries so far
  int number = 0;
  for (std::size_t start = 0; start < text.size();) {
    auto end = std::min(text.find('\n', start), text.size());
    auto line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (is_comment_or_blank(line)) continue;
    auto report = [&](const Error& error) {
      crontab.problems.push_back({number, ProblemKind::not_converted, error.message});
    };
    if (auto assignment = parse_assignment(line)) {
      if (!*assignment) {
        report(assignment->error());
      } else if (auto problem = apply_assignment(settings, **assignment, number)) {
        crontab.problems.push_back(*problem);
      }
      continue;
    }
    auto entry = parse_entry(line, format, settings);
    if (!entry) {
      report(entry.error());
      continue;
    }
    // Checked before the copy: past the limit, a line costs no more than its own length.
    if (carried + settings.env.bytes() > max_carried_environment) {
      report(too_much_environment(settings.env));
      continue;
    }
    carried += settings.env.bytes();
    entry->line = number;
    entry->env = settings.env.variables();
    crontab.entries.push_back(std::move(*entry));
  }
  return crontab;
}

Result<std::string> crontab_run_as(const CrontabEntry& entry, std::string_view importing_user) {
  if (entry.user.empty() || entry.user == importing_user) return std::string();
  auto run_as = parse_run_as(entry.user);
  if (!run_as || !run_as->group.empty())
    return fail(ErrorKind::bad_input, fmt::format("the user field \"{}\" is not a user name", printable(entry.user)));
  return entry.user;
}

Command crontab_command(const CrontabEntry& entry) {
  // The subshell on lines of its own keeps a trailing # comment of the
  // command from swallowing the closing parenthesis.
  std::string line =
      entry.input ? fmt::format("printf '%s' {} | (\n{}\n)", shell_quote(*entry.input), entry.command) : entry.command;
  if (entry.shell == "/bin/sh") return {{line}, true};
  return {{entry.shell, "-c", line}, false};
}

std::vector<std::string> crontab_task_names(const std::vector<CrontabEntry>& entries) {
  std::vector<std::string> names;
  std::unordered_set<std::string> taken;
  // The number to try first after a name met again: every lower one is
  // taken already, so each number is tried once, not once per repeat.
  std::unordered_map<std::string, int> next_number;
  for (const auto& entry : entries) {
    auto base = slug(main_command(entry.command));
    auto name = base;
    if (taken.contains(base)) {
      int& number = next_number.try_emplace(base, 2).first->second;
      do {
        name = fmt::format("{}-{}", base, number++);
      } while (taken.contains(name));
    }
    taken.insert(name);
    names.push_back(name);
  }
  return names;
}

}  // namespace taskd::core
