#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "exec/cgroup.hpp"
#include "temp_db.hpp"

using namespace taskd;
namespace fs = std::filesystem;

namespace {

// A run's cgroup as a plain directory in a tree whose cgroup.subtree_control
// enables `controllers`; its limit files exist, empty.
struct FakeCgroup {
  test::TempDir tree;
  fs::path run = tree.path() / "run-1";

  explicit FakeCgroup(const std::string& controllers) {
    std::ofstream(tree.path() / "cgroup.subtree_control") << controllers << "\n";
    std::ofstream(tree.path() / "cgroup.controllers") << "cpu memory pids\n";
    fs::create_directory(run);
    for (const char* file : {"memory.max", "cpu.weight", "pids.max"}) std::ofstream(run / file).flush();
  }

  // What taskd last wrote to `file`, emptied after (a cgroup file holds the
  // last value written; a plain file would keep the tail of a longer one).
  std::string taken(const char* file) const {
    std::ifstream in(run / file);
    std::string text(std::istreambuf_iterator<char>(in), {});
    std::ofstream(run / file).flush();
    return text;
  }
};

core::ResourceLimits all_limits() { return {64 << 20, 300, 16}; }

}  // namespace

TEST_CASE("a run's limits are written to its cgroup, and reset for a later run of a task without them") {
  FakeCgroup fake("cpu memory pids");
  exec::RunCgroup cgroup(fake.run, -1);
  REQUIRE(cgroup.limit(all_limits()));
  CHECK(fake.taken("memory.max") == "67108864");
  CHECK(fake.taken("cpu.weight") == "300");
  CHECK(fake.taken("pids.max") == "16");
  REQUIRE(cgroup.limit({.memory_max = std::nullopt, .cpu_weight = std::nullopt, .tasks_max = 8}));
  CHECK(fake.taken("memory.max") == "max");
  CHECK(fake.taken("cpu.weight") == "100");
  CHECK(fake.taken("pids.max") == "8");
  REQUIRE(cgroup.limit({}));
  CHECK(fake.taken("memory.max") == "max");
  CHECK(fake.taken("cpu.weight") == "100");
  CHECK(fake.taken("pids.max") == "max");
  REQUIRE(cgroup.limit({}));  // nothing left to reset: nothing written
  CHECK(fake.taken("memory.max").empty());
  CHECK(fake.taken("pids.max").empty());
}

TEST_CASE("a cgroup whose runs never had limits is not written to") {
  FakeCgroup fake("cpu memory pids");
  exec::RunCgroup cgroup(fake.run, -1);
  REQUIRE(cgroup.limit({}));
  CHECK(fake.taken("memory.max").empty());
  CHECK(fake.taken("cpu.weight").empty());
}

TEST_CASE("a limit whose controller the tree does not enable is refused, naming the limit, controller and tree") {
  FakeCgroup fake("cpu pids");
  exec::RunCgroup cgroup(fake.run, -1);
  auto refused = cgroup.limit(all_limits());
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == core::ErrorKind::unavailable);
  const auto& message = refused.error().message;
  CHECK(message.find("--memory-max 64M needs the cgroup memory controller") != std::string::npos);
  CHECK(message.find(fake.tree.path().string()) != std::string::npos);
  CHECK(message.find("cgroup.subtree_control: cpu pids") != std::string::npos);
  CHECK(fake.taken("cpu.weight").empty());  // nothing written before the refusal
  CHECK(cgroup.limit({.memory_max = std::nullopt, .cpu_weight = 50, .tasks_max = std::nullopt}));
  CHECK(fake.taken("cpu.weight") == "50");
}

TEST_CASE("without a cgroup, the first limit is named with the controller it needs and why there is none") {
  CHECK(exec::limits_without_cgroup({.memory_max = std::nullopt, .cpu_weight = 200, .tasks_max = 9}, "no reason") ==
        "--cpu-weight 200 needs a cgroup with the cpu controller: no reason");
  CHECK(exec::limits_without_cgroup({}, "no reason").empty());
  CHECK(exec::limits_unavailable_here({}).empty());
}
