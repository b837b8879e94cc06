#include <doctest/doctest.h>

#include <set>

#include "core/task_fields.hpp"

using namespace taskd::core;

namespace {

// A stored column holding what a field's value() gives the store.
class HeldCell final : public StoredCell {
 public:
  explicit HeldCell(FieldValue value) : value_(std::move(value)) {}
  bool is_null() const override { return std::holds_alternative<std::monostate>(value_); }
  bool is_integer() const override {
    return std::holds_alternative<std::int64_t>(value_) || std::holds_alternative<bool>(value_);
  }
  std::int64_t integer() const override {
    if (const auto* flag = std::get_if<bool>(&value_)) return *flag;  // stored as 0 or 1
    return std::get<std::int64_t>(value_);
  }
  std::string_view text() const override {
    if (const auto* text = std::get_if<std::string>(&value_)) return *text;
    return "";
  }

 private:
  FieldValue value_;
};

// A definition on a schedule of slots, each field of the table away from its default.
TaskDefinition unusual_definition() {
  TaskDefinition d;
  d.name = "t";
  d.schedule_kind = ScheduleKind::every;
  d.schedule_spec = "1h";
  d.timeout = Seconds{600};
  d.kill_grace = Seconds{5};
  d.tolerance = Seconds{90};
  d.overlap = Overlap::queue;
  d.owner = "ops";
  d.group = "nightly";
  d.priority = -3;
  d.notify = "echo failed";
  d.keep_runs = 12;
  d.keep_output = 64 << 10;
  d.on_host = "h1";
  d.catch_up = CatchUp{CatchUp::Kind::all, 4};
  d.catch_up_window = Seconds{7200};
  d.limits = {512LL << 20, 200, 64};
  d.alert_after = Seconds{86400};
  d.disable_when_exhausted = true;
  d.user = "www-data:adm";
  d.env_file = "/etc/taskd/secrets.env";
  d.mail_to = "ops@example.org,root@localhost";
  d.ping_url = "https://hc-ping.example/5f3a";
  d.notify_url = "http://127.0.0.1:8080/hooks/taskd";
  d.notify_format = NotifyFormat::slack;
  d.rdate = parse_set_dates("2026-12-24T15:30", false).value();
  d.exdate = parse_set_dates("2026-12-25,2026-12-28T09:00+01:00", true).value();
  d.skip_calendar = {"at-holidays", "de-holidays"};
  d.only_calendar = "paydays";
  return d;
}

}  // namespace

TEST_CASE("each field of the table reads back its option's text, and its stored value") {
  const auto d = unusual_definition();
  const auto schedule = schedule_of(d).value();
  auto now = from_unix_ms(0);
  for (const auto& field : task_fields()) {
    CAPTURE(field.name);
    TaskDefinition from_text;
    from_text.schedule_kind = d.schedule_kind;
    from_text.schedule_spec = d.schedule_spec;
    from_text.catch_up = d.catch_up;  // catch_up_window's check reads it
    REQUIRE(field.set(field.text(d), from_text, schedule, now));
    CHECK(field.same(from_text, d));
    CHECK_FALSE(field.same(TaskDefinition{}, d));
    TaskDefinition from_store;
    REQUIRE(field.read(HeldCell(field.value(d)), from_store));
    CHECK(field.same(from_store, d));
  }
}

TEST_CASE("a field's initial text is its default") {
  const TaskDefinition defaults;
  for (const auto& field : task_fields()) {
    CAPTURE(field.name);
    CHECK(field.text(defaults) == field.initial);
  }
}

TEST_CASE("fields are named and stored once, and their options are their names with dashes") {
  std::set<std::string_view> names;
  std::set<std::string_view> columns;
  for (const auto& field : task_fields()) {
    CHECK(names.insert(field.name).second);
    CHECK(columns.insert(field.column).second);
    CHECK(task_field_of_column(field.column) == &field);
  }
  CHECK(task_field_of_column("keep_runs")->flag() == "--keep-runs");
  CHECK(task_field_of_column("group_name")->name == "group");
  CHECK(task_field_of_column("retry") == nullptr);
}

TEST_CASE("a stored value out of its field's range names what it should be") {
  const auto& keep_runs = *task_field_of_column("keep_runs");
  TaskDefinition d;
  auto read = keep_runs.read(HeldCell(std::int64_t{0}), d);
  REQUIRE_FALSE(read);
  CHECK(read.error().message == "0 is not from 1 to 2147483647");
  read = keep_runs.read(HeldCell(std::string("many")), d);
  REQUIRE_FALSE(read);
  CHECK(read.error().message == "not an integer: \"many\"");
  CHECK(d.keep_runs == 1000);
}
