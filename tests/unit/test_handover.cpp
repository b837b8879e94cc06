#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>
#include <fmt/format.h>
#include <limits>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/handover.hpp"
#include "exec/supervisor.hpp"
#include "exec/watchdog.hpp"

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

TEST_CASE("a hand-over the supervisor cannot take over leaves its watchdog watching") {
  auto watchdog = taskd::exec::Watchdog::start(nullptr, std::nullopt);
  REQUIRE(watchdog.has_value());
  auto handed = watchdog->handed();
  taskd::exec::SupervisorHandover handover{"subreaper", handed, std::nullopt, {}};
  // No child of this process's: the check fails after the watchdog's would have passed.
  handover.children.push_back(taskd::exec::HandedChild{.key = 1, .pid = ::getppid()});
  std::vector<int> inherited{handed.taskd_end, handed.table};
  std::ranges::sort(inherited);
  taskd::exec::Handover from{std::string(), inherited};
  auto adopted = taskd::exec::Supervisor::adopt(handover, from);
  REQUIRE_FALSE(adopted.has_value());
  CHECK(adopted.error().message == fmt::format("the child {} of run 1 cannot be taken over", ::getppid()));
  CHECK(::waitpid(handed.pid, nullptr, WNOHANG) == 0);  // not told goodbye, not ended
  CHECK(::kill(handed.pid, 0) == 0);
}

TEST_CASE("a hand-over naming a descriptor it did not keep, or one twice, is refused") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  taskd::exec::SupervisorHandover handover{"subreaper", std::nullopt, std::nullopt, {}};
  handover.children.push_back(taskd::exec::HandedChild{.key = 1, .pid = ::getpid(), .output_fd = fds[0]});
  CHECK(taskd::exec::Supervisor::adopt(handover, taskd::exec::Handover{std::string(), {}}).error().message ==
        fmt::format("the descriptor {} is not one the previous image kept for its runs", fds[0]));
  handover.children.push_back(taskd::exec::HandedChild{.key = 2, .pid = ::getpid(), .output_fd = fds[0]});
  CHECK(taskd::exec::Supervisor::adopt(handover, taskd::exec::Handover{std::string(), {fds[0]}}).error().message ==
        fmt::format("the descriptor {} is not one the previous image kept for its runs", fds[0]));
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST_CASE("a shutdown list's kill grace is bounded, so that no time it gives overflows") {
  constexpr auto most = std::numeric_limits<std::int64_t>::max();
  RecordWriter writer;
  write_shutdown_list(
      writer, {{ShutdownEntry{.run_id = 7, .task_id = 3, .pid = 4242, .kill_grace_seconds = most}}, {}, "", ""});
  RecordReader reader(writer.record());
  CHECK(read_shutdown_list(reader).error().message ==
        fmt::format("the hand-over record's kill grace {} is out of range", most));
}
