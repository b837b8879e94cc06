#include "cli/task_file_write.hpp"

#include <fmt/format.h>
#include <utility>

#include "cli/task_options.hpp"
#include "core/defaults.hpp"
#include "core/task_fields.hpp"
#include "core/text.hpp"

namespace taskd::cli {
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
  std::string text;
  std::string_view separator;
  for (const auto& item : items) {
    text.append(std::exchange(separator, ", "));
    text += format(item);
  }
  return text;
}

// Appended, not formatted: a million tasks are exported at times.
void write_key(std::string& out, std::string_view key, std::string_view value_text) {
  out.append(key).append(" = ").append(value_text).push_back('\n');
}

// A text option, unless it says what leaving it out says.
void write_text(std::string& out, std::string_view key, const std::string& text, const std::string& implied = "") {
  if (text != implied) write_key(out, key, toml_string(text));
}

bool from_defaults(const core::TaskDefinition& d, std::string_view field) {
  return std::ranges::find(d.from_defaults, field) != d.from_defaults.end();
}

// Whether a field is written when it has the value that leaving it out
// gives: the owner (without it, apply would make the file the owner), and
// a field that has a default but that the task sets itself (left out, it
// would follow the defaults).
bool written_always(const core::TaskDefinition& d, std::string_view field) {
  return field == "owner" || (core::is_defaultable(field) && !from_defaults(d, field));
}

// The items of a list field's text ("a,b"), none when it is empty.
std::vector<std::string> comma_items(std::string_view text) {
  std::vector<std::string> items;
  for (std::size_t start = 0; start < text.size();) {
    auto comma = std::min(text.find(',', start), text.size());
    items.emplace_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

// A field of the table, unless it has its initial text or follows the defaults.
void write_field(std::string& out, const core::TaskDefinition& d, const core::TaskField& field) {
  if (from_defaults(d, field.name)) return;
  const auto text = field.text(d);
  if (text == field.initial && !written_always(d, field.name)) return;
  bool bare = field.file_form == core::FileForm::whole_number || field.file_form == core::FileForm::limit_as_number ||
              field.file_form == core::FileForm::flag;
  if (field.file_form == core::FileForm::text_list)
    write_key(out, field.name, fmt::format("[{}]", joined(comma_items(text), toml_string)));
  else
    write_key(out, field.name, bare ? text : toml_string(text));
}

std::string command_text(const core::Command& command) {
  if (command.shell) return toml_string(command.argv.empty() ? "" : command.argv.front());
  return fmt::format("[{}]", joined(command.argv, toml_string));
}

void write_lists(std::string& out, const core::TaskDefinition& d) {
  if (!from_defaults(d, "retry"))
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

void write_task(std::string& out, const core::TaskDefinition& d, const std::optional<std::string>& file_owner) {
  // Each field's text only when it is written: a million tasks are exported at times.
  const ScheduleOptions schedule = schedule_options_of(d);
  out += "\n[[task]]\n";
  write_text(out, "name", d.name);
  write_key(out, "command", command_text(d.command));
  write_text(out, "every", schedule.every);
  write_text(out, "cron", schedule.cron);
  write_text(out, "rrule", schedule.rrule);
  if (schedule.after_finish) write_key(out, "after_finish", "true");
  if (schedule.manual) write_key(out, "manual", "true");
  write_text(out, "phase", schedule.phase);
  if (!from_defaults(d, "tz")) write_text(out, "tz", schedule.tz);
  write_text(out, "dtstart", schedule.dtstart);
  write_text(out, "jitter", schedule.jitter);
  write_text(out, "dst_gap", schedule.dst_gap);
  write_text(out, "dst_repeat", schedule.dst_repeat);
  for (const auto& field : core::task_fields()) {
    if (field.name == "overlap") write_lists(out, d);
    if (field.name == "owner") write_text(out, "cwd", d.cwd);
    if (field.name == "owner" && d.owner == file_owner) continue;
    write_field(out, d, field);
  }
  write_text(out, "after", core::to_string(d.after));
}

std::string task_file_head(const std::optional<std::string>& owner, const std::map<std::string, int>& group_caps) {
  std::string out = "# taskd tasks: taskd apply FILE reads them back (see taskd.toml(5)).\n";
  if (owner) write_key(out, "owner", toml_string(*owner));
  for (const auto& [name, cap] : group_caps)
    out += fmt::format("\n[group.{}]\nconcurrency = {}\n", toml_string(name), cap);
  return out;
}

void write_calendar(std::string& out, std::string_view name, const std::vector<core::CalendarDate>& dates) {
  out += fmt::format("\n[[calendar]]\nname = {}\ndates = [\n", toml_string(name));
  for (const auto& date : dates) out += fmt::format("  {},\n", toml_string(core::calendar_date_line(date)));
  out += "]\n";
}

std::string write_task_file(const std::vector<core::TaskDefinition>& definitions,
                            const std::map<std::string, int>& group_caps) {
  std::string out = task_file_head(std::nullopt, group_caps);
  for (const auto& definition : definitions) write_task(out, definition);
  return out;
}

}  // namespace taskd::cli
