#include "cli/task_file_keys.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <type_traits>

#include "core/task_fields.hpp"

namespace taskd::cli {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

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

// A field of the table as its file form gives it, set as the option's text.
Result<void> set_field(const core::TaskField& field, const toml::node& value, FileTask& task) {
  auto number = value.value_exact<std::int64_t>();
  std::optional<std::string> text;
  switch (field.file_form) {
    case core::FileForm::text:
      text = value.value_exact<std::string>();
      if (!text) return expected("a string");
      break;
    case core::FileForm::whole_number:
      if (!number || *number < std::numeric_limits<int>::min() || *number > std::numeric_limits<int>::max())
        return expected("a whole number");
      text = std::to_string(*number);
      break;
    case core::FileForm::limit_as_text:
    case core::FileForm::limit_as_number:
      text = number ? std::to_string(*number) : value.value_exact<std::string>();
      if (!text) return expected("a whole number or a string, e.g. \"512M\" or \"max\"");
      break;
    case core::FileForm::flag:
      if (auto flag = value.value_exact<bool>()) text = *flag ? "true" : "false";
      if (!text) return expected("true or false");
      break;
    case core::FileForm::text_list:
      if (auto items = array_of<std::string>(value)) text = fmt::format("{}", fmt::join(*items, ","));
      if (!text) return expected("an array of strings");
      break;
  }
  task.options.field(field) = *text;
  return {};
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

}  // namespace

const std::map<std::string, Setter, std::less<>>& task_keys() {
  static const auto keys = [] {
    std::map<std::string, Setter, std::less<>> table{
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
        {"retry", set_retry},
        {"permanent_exit", set_permanent_exit},
        {"env", set_env},
        {"cwd", set_text<&TaskOptions::cwd>},
        {"after", set_text<&TaskOptions::after>},
        {"start_now", set_flag<&FileTask::start_now>},
    };
    for (const auto& field : core::task_fields()) {
      table.emplace(field.name,
                    [&field](const toml::node& value, FileTask& task) { return set_field(field, value, task); });
    }
    return table;
  }();
  return keys;
}
}  // namespace taskd::cli
