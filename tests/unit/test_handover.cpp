#include <doctest/doctest.h>

#include <string>

#include "exec/handover.hpp"

using taskd::exec::read_shutdown_list;
using taskd::exec::RecordReader;
using taskd::exec::RecordWriter;
using taskd::exec::ShutdownEntry;
using taskd::exec::ShutdownList;

TEST_CASE("a hand-over record reads back as written, bytes of any kind included") {
  RecordWriter writer;
  writer.text(std::string("a:1\0b", 5));
  writer.number(-42);
  writer.flag(true);
  RecordReader reader(writer.record());
  CHECK(reader.text("text").value() == std::string("a:1\0b", 5));
  CHECK(reader.number("number").value() == -42);
  CHECK(reader.flag("flag").value());
  CHECK(reader.at_end());
}

TEST_CASE("a field that is not as written is an error naming it") {
  CHECK(RecordReader("9:abc").text("head").error().message == "the hand-over record's head has a bad length");
  CHECK(RecordReader("abc").text("head").error().message == "the hand-over record's head is missing");
  CHECK(RecordReader("2:4x").number("pid").error().message == "the hand-over record's pid is not a number");
  CHECK(RecordReader("1:2").flag("flag").error().message == "the hand-over record's flag 2 is out of range");
  CHECK(RecordReader("-1:").text("head").error().message == "the hand-over record's head has a bad length");
}

TEST_CASE("the shutdown list reads back as written") {
  ShutdownList list;
  list.runs.push_back(ShutdownEntry{.run_id = 7, .task_id = 3, .task = "backup", .attempt_uid = "ab12",
                                    .trigger = 1, .pid = 4242, .output_fd = 9, .kill_grace_seconds = 10,
                                    .run_attempt_no = 2, .run_index = 5, .before_attempt_no = 1,
                                    .before_run_index = 4, .before_last_run_at_ms = 1'700'000'000'000});
  list.other_fds = {5, 6};
  list.cgroup_tree = "/sys/fs/cgroup/x/taskd-1-2";
  RecordWriter writer;
  write_shutdown_list(writer, list);
  RecordReader reader(writer.record());
  auto read = read_shutdown_list(reader);
  REQUIRE(read.has_value());
  REQUIRE(read->runs.size() == 1);
  const auto& run = read->runs[0];
  CHECK(run.run_id == 7);
  CHECK(run.task == "backup");
  CHECK(run.pid == 4242);
  CHECK(run.before_last_run_at_ms == 1'700'000'000'000);
  CHECK(read->other_fds == std::vector<std::int64_t>{5, 6});
  CHECK(read->cgroup_tree == "/sys/fs/cgroup/x/taskd-1-2");
  CHECK(reader.at_end());
}

TEST_CASE("a shutdown list naming no child of taskd's is refused") {
  RecordWriter writer;
  write_shutdown_list(writer, {{ShutdownEntry{.run_id = 7, .task_id = 3, .pid = 1}}, {}, "", ""});
  RecordReader reader(writer.record());
  CHECK(read_shutdown_list(reader).error().message == "the hand-over record's child pid 1 is out of range");
}
