#include "cli/task_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <limits>
#include <set>
#include <type_traits>

#include "cli/input_file.hpp"
#include "core/text.hpp"

namespace taskd::cli {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

std::string position(const std::filesystem::path& path, const toml::source_region& source) {
  return fmt::format("{}:{}:{}", path.string(), source.begin.line, source.begin.column);
}

std::unexpected<core::Error> expected(std::string_view what) {
  return fail(ErrorKind::bad_input, fmt::format("expected {}", what));
}

// The field a key sets: a member of TaskOptions, of its ScheduleOptions, or
// of FileTask itself.
template <class Member>
struct member_class;
template <class Value, class Class>
struct member_class<Value Class::*> {
  using type = Class;
};

template <auto Member>
auto& field(FileTask& task) {
  using Class = typename member_class<decltype(Member)>::type;
  if constexpr (std::is_same_v<Class, ScheduleOptions>) {
    return task.options.schedule.*Member;
  } else if constexpr (std::is_same_v<Class, TaskOptions>) {
    return task.options.*Member;
  } else {
    return task.*Member;
  }
}

template <auto Member>
Result<void> set_text(const toml::node& value, FileTask& task) {
  auto text = value.value_exact<std::string>();
  if (!text) return expected("a string");
  field<Member>(task) = *text;
  return {};
}

template <auto Member>
Result<void> set_flag(const toml::node& value, FileTask& task) {
  auto flag = value.value_exact<bool>();
  if (!flag) return expected("true or false");
  field<Member>(task) = *flag;
  return {};
}

template <auto Member>
Result<void> set_number(const toml::node& value, FileTask& task) {
  auto number = value.value_exact<std::int64_t>();
  if (!number || *number < std::numeric_limits<int>::min() || *number > std::numeric_limits<int>::max())
    return expected("a whole number");
  field<Member>(task) = static_cast<int>(*number);
  return {};
}

// A limit: a whole number, or a string as the option takes it ("512M", "max").
template <auto Member>
Result<void> set_limit(const toml::node& value, FileTask& task) {
  auto number = value.value_exact<std::int64_t>();
  auto text = number ? std::to_string(*number) : value.value_exact<std::string>();
  if (!text) return expected("a whole number or a string, e.g. \"512M\" or \"max\"");
  field<Member>(task) = *text;
  return {};
}

template <class T>
std::optional<std::vector<T>> array_of(const toml::node& value) {
  const auto* array = value.as_array();
  if (!array) return std::nullopt;
  std::vector<T> items;
  for (const auto& item : *array) {
    auto element = item.value_exact<T>();
    if (!element) return std::nullopt;
    items.push_back(*element);
  }
  return items;
}

// An array is the program and its arguments; a string is a line for /bin/sh -c.
Result<void> set_command(const toml::node& value, FileTask& task) {
  if (auto line = value.value_exact<std::string>()) {
    task.options.command = {*line};
    task.options.shell = true;
    return {};
  }
  auto argv = array_of<std::string>(value);
  if (!argv || argv->empty())
    return expected("an array of strings (the program and its arguments) or a string (a line for /bin/sh -c)");
  task.options.command = *argv;
  task.options.shell = false;
  return {};
}

template <class T>
std::string joined_or_none(const std::vector<T>& items) {
  return items.empty() ? "none" : fmt::format("{}", fmt::join(items, ","));
}

Result<void> set_retry(const toml::node& value, FileTask& task) {
  auto delays = array_of<std::string>(value);
  if (!delays) return expected("an array of durations, e.g. [\"1m\", \"5m\"]");
  task.options.retry = joined_or_none(*delays);
  return {};
}

Result<void> set_permanent_exit(const toml::node& value, FileTask& task) {
  auto codes = array_of<std::int64_t>(value);
  if (!codes) return expected("an array of exit codes, e.g. [78]");
  task.options.permanent_exit = joined_or_none(*codes);
  return {};
}

// Environment entries in the order the file lists them (TOML tables have none).
Result<void> set_env(const toml::node& value, FileTask& task) {
  const auto* table = value.as_table();
  if (!table) return expected("a table of NAME = \"VALUE\"");
  std::vector<std::pair<toml::source_position, std::string>> entries;
  for (const auto& [name, text] : *table) {
    auto assigned = text.value_exact<std::string>();
    if (!assigned) return expected(fmt::format("a string as the value of {}", name.str()));
    // A quoted key with "=" would split elsewhere than written.
    if (name.str().find('=') != std::string_view::npos)
      return fail(ErrorKind::bad_input, fmt::format("\"{}\" is not a variable name", name.str()));
    entries.emplace_back(name.source().begin, fmt::format("{}={}", name.str(), *assigned));
  }
  std::ranges::sort(entries, [](const auto& a, const auto& b) {
    return std::pair(a.first.line, a.first.column) < std::pair(b.first.line, b.first.column);
  });
  task.options.env.clear();
  for (auto& [where, assignment] : entries) task.options.env.push_back(std::move(assignment));
  return {};
}

using Setter = Result<void> (*)(const toml::node& value, FileTask& task);

// Every key of a [[task]] table: the options of `add` without dashes.
const std::map<std::string, Setter, std::less<>>& task_keys() {
  static const std::map<std::string, Setter, std::less<>> keys{
      {"name", set_text<&TaskOptions::name>},
      {"command", set_command},
      {"every", set_text<&ScheduleOptions::every>},
      {"cron", set_text<&ScheduleOptions::cron>},
      {"rrule", set_text<&ScheduleOptions::rrule>},
      {"tz", set_text<&ScheduleOptions::tz>},
      {"dtstart", set_text<&ScheduleOptions::dtstart>},
      {"phase", set_text<&ScheduleOptions::phase>},
      {"after_finish", set_flag<&ScheduleOptions::after_finish>},
      {"manual", set_flag<&ScheduleOptions::manual>},
      {"jitter", set_text<&ScheduleOptions::jitter>},
      {"dst_gap", set_text<&ScheduleOptions::dst_gap>},
      {"dst_repeat", set_text<&ScheduleOptions::dst_repeat>},
      {"timeout", set_text<&TaskOptions::timeout>},
      {"kill_grace", set_text<&TaskOptions::kill_grace>},
      {"tolerance", set_text<&TaskOptions::tolerance>},
      {"retry", set_retry},
      {"permanent_exit", set_permanent_exit},
      {"overlap", set_text<&TaskOptions::overlap>},
      {"env", set_env},
      {"cwd", set_text<&TaskOptions::cwd>},
      {"owner", set_text<&TaskOptions::owner>},
      {"group", set_text<&TaskOptions::group>},
      {"priority", set_number<&TaskOptions::priority>},
      {"keep_runs", set_number<&TaskOptions::keep_runs>},
      {"notify", set_text<&TaskOptions::notify>},
      {"on_host", set_text<&TaskOptions::on_host>},
      {"catch_up", set_text<&TaskOptions::catch_up>},
      {"catch_up_window", set_text<&TaskOptions::catch_up_window>},
      {"memory_max", set_limit<&TaskOptions::memory_max>},
      {"cpu_weight", set_limit<&TaskOptions::cpu_weight>},
      {"tasks_max", set_limit<&TaskOptions::tasks_max>},
      {"alert_after", set_text<&TaskOptions::alert_after>},
      {"after", set_text<&TaskOptions::after>},
      {"start_now", set_flag<&FileTask::start_now>},
  };
  return keys;
}

bool is_schedule_key(std::string_view key) {
  return key == "every" || key == "cron" || key == "rrule" || key == "manual";
}

bool has_schedule(const toml::table& table) {
  return std::ranges::any_of(table, [](const auto& entry) { return is_schedule_key(entry.first.str()); });
}

// Sets one key of `task`; `context` ("task \"x\"", "[defaults]") names the table in messages.
Result<void> set_key(const std::filesystem::path& path, const toml::key& key, const toml::node& value, FileTask& task,
                     std::string_view context) {
  auto setter = task_keys().find(key.str());
  if (setter == task_keys().end())
    return fail(ErrorKind::bad_input,
                fmt::format("{}: unknown key \"{}\" in {}", position(path, key.source()), key.str(), context));
  if (auto set = setter->second(value, task); !set)
    return fail(ErrorKind::bad_input,
                fmt::format("{}: {}: {}: {}", position(path, value.source()), context, key.str(), set.error().message));
  task.keys[std::string(key.str())] = position(path, value.source());
  return {};
}

Result<void> check_defaults(const std::filesystem::path& path, const toml::table& defaults) {
  FileTask scratch;
  for (const auto& [key, value] : defaults) {
    if (key.str() == "name")
      return fail(ErrorKind::bad_input, fmt::format("{}: [defaults] cannot give a name: each task has its own",
                                                    position(path, key.source())));
    if (auto set = set_key(path, key, value, scratch, "[defaults]"); !set) return set;
  }
  return {};
}

// A default applies where the task says nothing, and a default schedule only
// to a task without one.
Result<void> apply_defaults(const std::filesystem::path& path, const toml::table& table, const toml::table& defaults,
                            FileTask& task) {
  for (const auto& [key, value] : defaults) {
    if (table.contains(key.str()) || (is_schedule_key(key.str()) && has_schedule(table))) continue;
    if (auto set = set_key(path, key, value, task, "[defaults]"); !set) return set;
  }
  return {};
}

struct FileContext {
  std::filesystem::path path;  // as given
  std::string owner;
  const toml::table* defaults = nullptr;
};

// What [defaults] and the file add once a task's own keys are read.
Result<void> complete_task(const FileContext& file, const toml::table& table, FileTask& task) {
  if (file.defaults) {
    if (auto applied = apply_defaults(file.path, table, *file.defaults, task); !applied) return applied;
  }
  if (task.options.command.empty())
    return fail(ErrorKind::bad_input, fmt::format("{}: task \"{}\" has no command (command = [\"PROGRAM\", \"ARG\"])",
                                                  task.where, task.options.name));
  if (!task.keys.contains("owner")) task.options.owner = file.owner;
  if (!task.options.cwd.empty())
    task.options.cwd =
        std::filesystem::absolute(file.path.parent_path() / task.options.cwd).lexically_normal().string();
  return {};
}

Result<FileTask> read_task(const FileContext& file, const toml::node& node) {
  FileTask task;
  task.where = position(file.path, node.source());
  const auto* table = node.as_table();
  if (!table) return fail(ErrorKind::bad_input, task.where + ": expected a [[task]] table");
  auto name = (*table)["name"].value_exact<std::string>();
  if (!name) return fail(ErrorKind::bad_input, task.where + ": a task without a name (name = \"…\")");
  std::string context = fmt::format("task \"{}\"", *name);
  for (const auto& [key, value] : *table) {
    if (auto set = set_key(file.path, key, value, task, context); !set) return std::unexpected(set.error());
  }
  if (auto completed = complete_task(file, *table, task); !completed) return std::unexpected(completed.error());
  return task;
}

Result<std::vector<FileTask>> read_tasks(const FileContext& file, const toml::node& node) {
  const auto* array = node.as_array();
  if (!array || !array->is_array_of_tables())
    return fail(ErrorKind::bad_input, position(file.path, node.source()) + ": task: expected [[task]] tables");
  std::vector<FileTask> tasks;
  std::map<std::string, std::string> seen;  // name → where
  for (const auto& element : *array) {
    auto task = read_task(file, element);
    if (!task) return std::unexpected(task.error());
    auto [first, inserted] = seen.emplace(task->options.name, task->where);
    if (!inserted)
      return fail(ErrorKind::bad_input, fmt::format("{}: task \"{}\" is already listed at {}", task->where,
                                                    task->options.name, first->second));
    tasks.push_back(std::move(*task));
  }
  return tasks;
}

Result<int> read_group_cap(const std::filesystem::path& path, const toml::key& name, const toml::node& node) {
  const auto* table = node.as_table();
  if (!table) return fail(ErrorKind::bad_input, position(path, node.source()) + ": expected a [group.NAME] table");
  if (auto valid = core::validate_task_name(name.str()); !valid)
    return fail(ErrorKind::bad_input,
                fmt::format("{}: group: {}", position(path, name.source()), valid.error().message));
  for (const auto& [key, value] : *table) {
    if (key.str() != "concurrency")
      return fail(ErrorKind::bad_input, fmt::format("{}: unknown key \"{}\" in [group.{}] (only concurrency)",
                                                    position(path, key.source()), key.str(), name.str()));
  }
  auto cap = (*table)["concurrency"].value_exact<std::int64_t>();
  if (!cap || *cap < 1 || *cap > std::numeric_limits<int>::max())
    return fail(ErrorKind::bad_input, fmt::format("{}: [group.{}] needs concurrency = N, a whole number of at least 1",
                                                  position(path, node.source()), name.str()));
  return static_cast<int>(*cap);
}

Result<std::map<std::string, int>> read_groups(const std::filesystem::path& path, const toml::node& node) {
  const auto* table = node.as_table();
  if (!table)
    return fail(ErrorKind::bad_input, position(path, node.source()) + ": group: expected [group.NAME] tables");
  std::map<std::string, int> caps;
  for (const auto& [name, group] : *table) {
    auto cap = read_group_cap(path, name, group);
    if (!cap) return std::unexpected(cap.error());
    caps.emplace(name.str(), *cap);
  }
  return caps;
}

Result<void> check_top_level(const std::filesystem::path& path, const toml::table& root) {
  for (const auto& [key, value] : root) {
    if (key.str() != "task" && key.str() != "defaults" && key.str() != "group")
      return fail(ErrorKind::bad_input,
                  fmt::format("{}: unknown key \"{}\" (expected [[task]], [defaults] or [group.NAME])",
                              position(path, key.source()), key.str()));
  }
  if (const auto& defaults = root["defaults"]; defaults && !defaults.is_table())
    return fail(ErrorKind::bad_input,
                position(path, defaults.node()->source()) + ": defaults: expected a [defaults] table");
  return {};
}

Result<toml::table> parse_toml(std::string_view text, const std::filesystem::path& path) {
  try {
    return toml::parse(text, std::string_view(path.string()));
  } catch (const toml::parse_error& e) {
    return fail(ErrorKind::bad_input, fmt::format("{}: {}", position(path, e.source()), e.description()));
  }
}

}  // namespace

Result<TaskFile> parse_task_file(std::string_view text, const std::filesystem::path& path) {
  auto root = parse_toml(text, path);
  if (!root) return std::unexpected(root.error());
  if (auto checked = check_top_level(path, *root); !checked) return std::unexpected(checked.error());
  FileContext file{path, std::filesystem::absolute(path).lexically_normal().string(), (*root)["defaults"].as_table()};
  if (file.defaults) {
    if (auto checked = check_defaults(path, *file.defaults); !checked) return std::unexpected(checked.error());
    if (auto owner = (*file.defaults)["owner"].value_exact<std::string>()) file.owner = *owner;
  }
  TaskFile task_file{file.owner, {}, {}};
  if (const auto* tasks = root->get("task")) {
    auto read = read_tasks(file, *tasks);
    if (!read) return std::unexpected(read.error());
    task_file.tasks = std::move(*read);
  }
  if (const auto* groups = root->get("group")) {
    auto caps = read_groups(path, *groups);
    if (!caps) return std::unexpected(caps.error());
    task_file.group_caps = std::move(*caps);
  }
  return task_file;
}

Result<TaskFile> read_task_file(const std::filesystem::path& path) {
  auto text = read_input_file(path.string());
  if (!text) return std::unexpected(text.error());
  return parse_task_file(*text, path);
}

namespace {

// Where the file set the key that `message` names by its option
// ("--kill-grace: …"), else where the task starts.
std::string where_named(const FileTask& task, std::string_view message) {
  if (!message.starts_with("--")) return task.where;
  std::string key(message.substr(2, message.find_first_of(" :", 2) - 2));
  std::ranges::replace(key, '-', '_');
  auto found = task.keys.find(key);
  return found == task.keys.end() ? task.where : found->second;
}

}  // namespace

Result<core::TaskDefinition> file_task_definition(const FileTask& task, core::Time now) {
  auto definition = build_definition(task.options, now);
  if (definition) return definition;
  const auto& error = definition.error();
  // What the command line calls a usage error is a bad file here.
  auto kind = error.kind == ErrorKind::usage ? ErrorKind::bad_input : error.kind;
  return fail(kind,
              fmt::format("{}: task \"{}\": {}", where_named(task, error.message), task.options.name, error.message));
}

namespace {

using Definition = core::TaskDefinition;

template <auto... Members>
bool same(const Definition& a, const Definition& b) {
  return ((a.*Members == b.*Members) && ...);
}

template <auto Member>
bool same_limit(const Definition& a, const Definition& b) {
  return a.limits.*Member == b.limits.*Member;
}

template <auto Member>
bool same_dst(const Definition& a, const Definition& b) {
  return a.dst.*Member == b.dst.*Member;
}

using FieldComparison = bool (*)(const Definition&, const Definition&);

const std::vector<std::pair<std::string, FieldComparison>>& definition_fields() {
  static const std::vector<std::pair<std::string, FieldComparison>> fields{
      {"command", same<&Definition::command>},
      {"schedule", same<&Definition::schedule_kind, &Definition::schedule_spec>},
      {"tz", same<&Definition::tz>},
      {"after_finish", same<&Definition::after_finish>},
      {"phase", same<&Definition::phase>},
      {"dtstart", same<&Definition::dtstart>},
      {"jitter", same<&Definition::jitter>},
      {"dst_gap", same_dst<&core::DstPolicy::gap>},
      {"dst_repeat", same_dst<&core::DstPolicy::repeat>},
      {"timeout", same<&Definition::timeout>},
      {"kill_grace", same<&Definition::kill_grace>},
      {"tolerance", same<&Definition::tolerance>},
      {"retry", same<&Definition::retry>},
      {"permanent_exit", same<&Definition::permanent_exit>},
      {"overlap", same<&Definition::overlap>},
      {"owner", same<&Definition::owner>},
      {"group", same<&Definition::group>},
      {"priority", same<&Definition::priority>},
      {"cwd", same<&Definition::cwd>},
      {"env", same<&Definition::env>},
      {"notify", same<&Definition::notify>},
      {"keep_runs", same<&Definition::keep_runs>},
      {"on_host", same<&Definition::on_host>},
      {"catch_up", same<&Definition::catch_up>},
      {"catch_up_window", same<&Definition::catch_up_window>},
      {"memory_max", same_limit<&core::ResourceLimits::memory_max>},
      {"cpu_weight", same_limit<&core::ResourceLimits::cpu_weight>},
      {"tasks_max", same_limit<&core::ResourceLimits::tasks_max>},
      {"alert_after", same<&Definition::alert_after>},
      {"after", same<&Definition::after>},
  };
  return fields;
}

}  // namespace

std::vector<std::string> changed_fields(const core::TaskDefinition& before, const core::TaskDefinition& after) {
  std::vector<std::string> changed;
  for (const auto& [name, same_in] : definition_fields()) {
    if (!same_in(before, after)) changed.push_back(name);
  }
  return changed;
}

namespace {

// A TOML basic string with everything escaped that TOML requires, and
// U+FFFD for each byte that is not UTF-8, which TOML cannot hold. (toml++
// 3.3 writes a string that starts with a newline as a multi-line literal,
// which loses that newline when read back.)
std::string toml_string(std::string_view text) {
  std::string out = "\"";
  for (char c : core::valid_utf8(text)) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          out += fmt::format("\\u{:04X}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// "a, b, c": the items, each as `format` writes it.
template <class T, class Format>
std::string joined(const std::vector<T>& items, Format format) {
  std::vector<std::string> texts;
  for (const auto& item : items) texts.push_back(format(item));
  return fmt::format("{}", fmt::join(texts, ", "));
}

void write_key(std::string& out, std::string_view key, const std::string& value_text) {
  out += fmt::format("{} = {}\n", key, value_text);
}

// A text option, unless it says what leaving it out says.
void write_text(std::string& out, std::string_view key, const std::string& text, const std::string& implied = "") {
  if (text != implied) write_key(out, key, toml_string(text));
}

void write_number(std::string& out, std::string_view key, const std::optional<std::int64_t>& number) {
  if (number) write_key(out, key, std::to_string(*number));
}

std::string command_text(const core::Command& command) {
  if (command.shell) return toml_string(command.argv.empty() ? "" : command.argv.front());
  return fmt::format("[{}]", joined(command.argv, toml_string));
}

void write_lists(std::string& out, const core::TaskDefinition& d) {
  if (d.retry != core::default_retry_ladder())
    write_key(out, "retry", fmt::format("[{}]", joined(d.retry, [](core::Seconds delay) {
                                          return toml_string(core::format_duration(delay));
                                        })));
  if (d.permanent_exit != core::TaskDefinition{}.permanent_exit)
    write_key(out, "permanent_exit",
              fmt::format("[{}]", joined(d.permanent_exit, [](int code) { return std::to_string(code); })));
  if (!d.env.empty()) {
    // In their order; the names are bare keys (letters, digits and _).
    auto entry = [](const core::EnvVar& variable) { return variable.first + " = " + toml_string(variable.second); };
    write_key(out, "env", fmt::format("{{ {} }}", joined(d.env, entry)));
  }
}

}  // namespace

void write_task(std::string& out, const core::TaskDefinition& d) {
  const TaskOptions o = options_of(d);
  const TaskOptions implied;
  out += "\n[[task]]\n";
  write_text(out, "name", o.name);
  write_key(out, "command", command_text(d.command));
  write_text(out, "every", o.schedule.every);
  write_text(out, "cron", o.schedule.cron);
  write_text(out, "rrule", o.schedule.rrule);
  if (o.schedule.after_finish) write_key(out, "after_finish", "true");
  if (o.schedule.manual) write_key(out, "manual", "true");
  write_text(out, "phase", o.schedule.phase);
  write_text(out, "tz", o.schedule.tz);
  write_text(out, "dtstart", o.schedule.dtstart);
  write_text(out, "jitter", o.schedule.jitter);
  write_text(out, "dst_gap", o.schedule.dst_gap);
  write_text(out, "dst_repeat", o.schedule.dst_repeat);
  write_text(out, "timeout", o.timeout);
  write_text(out, "kill_grace", o.kill_grace, implied.kill_grace);
  write_text(out, "tolerance", o.tolerance);
  write_lists(out, d);
  write_text(out, "overlap", o.overlap, implied.overlap);
  write_text(out, "cwd", o.cwd);
  // Always written: without it, apply would make the file the owner.
  write_key(out, "owner", toml_string(o.owner));
  write_text(out, "group", o.group);
  if (o.priority != implied.priority) write_key(out, "priority", std::to_string(o.priority));
  write_text(out, "notify", o.notify);
  if (o.keep_runs != implied.keep_runs) write_key(out, "keep_runs", std::to_string(o.keep_runs));
  write_text(out, "on_host", o.on_host);
  write_text(out, "catch_up", o.catch_up, implied.catch_up);
  write_text(out, "catch_up_window", o.catch_up_window);
  write_text(out, "memory_max", o.memory_max);
  write_number(out, "cpu_weight", d.limits.cpu_weight);
  write_number(out, "tasks_max", d.limits.tasks_max);
  write_text(out, "alert_after", o.alert_after);
  write_text(out, "after", o.after);
}

std::string task_file_head(const std::map<std::string, int>& group_caps) {
  std::string out = "# taskd tasks: taskd apply FILE reads them back (see taskd.toml(5)).\n";
  for (const auto& [name, cap] : group_caps)
    out += fmt::format("\n[group.{}]\nconcurrency = {}\n", toml_string(name), cap);
  return out;
}

std::string write_task_file(const std::vector<core::TaskDefinition>& definitions,
                            const std::map<std::string, int>& group_caps) {
  std::string out = task_file_head(group_caps);
  for (const auto& definition : definitions) write_task(out, definition);
  return out;
}

}  // namespace taskd::cli
