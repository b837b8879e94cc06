#include <doctest/doctest.h>
#include <fmt/format.h>

#include "core/env_file.hpp"
#include "core/task_fields.hpp"

using namespace taskd::core;

namespace {

std::string error_of(std::string_view text) {
  auto parsed = parse_env_file(text, "/etc/taskd/app.env");
  REQUIRE_FALSE(parsed);
  return parsed.error().message;
}

}  // namespace

TEST_CASE("an env file's lines are NAME=VALUE, the value verbatim to the end of the line") {
  auto parsed = parse_env_file("API_KEY=s3cr=t\n_X1= spaced \"quoted\" \nEMPTY=\n", "/f");
  REQUIRE(parsed);
  CHECK(*parsed == std::vector<EnvVar>{{"API_KEY", "s3cr=t"}, {"_X1", " spaced \"quoted\" "}, {"EMPTY", ""}});
}

TEST_CASE("blank lines and comments are skipped, and the last line needs no newline") {
  auto parsed = parse_env_file("# the keys\n\n   \n  # indented\t\nA=1\n\tB=2", "/f");
  REQUIRE(parsed);
  CHECK(*parsed == std::vector<EnvVar>{{"A", "1"}, {"B", "2"}});
  auto empty = parse_env_file("", "/f");
  REQUIRE(empty);
  CHECK(empty->empty());
}

TEST_CASE("a line that is not NAME=VALUE names the file and its number, never its text") {
  const std::string expected_tail =
      ": not a line NAME=VALUE (NAME of letters, digits and _, not starting with a digit)";
  CHECK(error_of("A=1\nexport TOKEN=hunter2\n") == "/etc/taskd/app.env:2" + expected_tail);
  CHECK(error_of("hunter2\n") == "/etc/taskd/app.env:1" + expected_tail);
  CHECK(error_of("A=1\n\n1ABC=hunter2") == "/etc/taskd/app.env:3" + expected_tail);
  CHECK(error_of("=hunter2\n") == "/etc/taskd/app.env:1" + expected_tail);
  CHECK(error_of(std::string_view("A=hun\0ter2\n", 11)) == "/etc/taskd/app.env:1" + expected_tail);
  CHECK(error_of("A-B=1\n").find("A-B") == std::string::npos);
}

TEST_CASE("an env file sets at most 1000 variables") {
  std::string text = "# many\n";
  for (std::size_t i = 0; i < max_env_file_variables; ++i) text += fmt::format("V{}=x\n", i);
  auto most = parse_env_file(text, "/f");
  REQUIRE(most);
  CHECK(most->size() == max_env_file_variables);
  CHECK(error_of(text + "ONE_MORE=x\n") == "/etc/taskd/app.env:1002: more than 1000 variables");
}

TEST_CASE("--env-file takes an absolute path, or '' for none") {
  const auto& field = *task_field_of_column("env_file");
  TaskDefinition d;
  Schedule schedule = Manual{};
  CHECK(field.set("/etc/taskd/app.env", d, schedule, from_unix_ms(0)));
  CHECK(d.env_file == "/etc/taskd/app.env");
  CHECK(field.set("", d, schedule, from_unix_ms(0)));
  auto relative = field.set("app.env", d, schedule, from_unix_ms(0));
  REQUIRE_FALSE(relative);
  CHECK(relative.error().message == "--env-file: \"app.env\" is not an absolute path");
}
