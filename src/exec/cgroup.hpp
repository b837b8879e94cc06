#pragma once
// Containment by cgroup v2 (taskd(1), CONTAINMENT): each run's processes in
// a cgroup of their own, which no descendant leaves by setsid, a double fork
// or a cleared environment; the run ended whole (cgroup.kill), its task's
// resource limits written to the cgroup's files and its CPU time and peak
// memory read from them. Where taskd may make cgroups: the cgroup2
// hierarchy is mounted (alone, or beside v1 at /sys/fs/cgroup/unified) and
// taskd's own cgroup in it is writable to it (root on such a host, a
// systemd unit with Delegate=yes, a user's delegated subtree).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/usage.hpp"

namespace taskd::exec {

// One run's cgroup.
class RunCgroup {
 public:
  RunCgroup(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  RunCgroup(RunCgroup&& other) noexcept;
  RunCgroup& operator=(RunCgroup&& other) noexcept;
  RunCgroup(const RunCgroup&) = delete;
  RunCgroup& operator=(const RunCgroup&) = delete;
  ~RunCgroup();

  // Its directory, open: a child is born in it (or moves itself in).
  int fd() const { return fd_; }
  const std::filesystem::path& path() const { return path_; }
  // Sends `signal` to every process in it now.
  void signal_all(int signal) const;
  // Kills every process in it, those it forks meanwhile too: cgroup.kill,
  // or (before Linux 5.14) freeze, SIGKILL each, thaw.
  void kill_all() const;
  // Whether a process is left in it.
  bool populated() const;
  // What it counted since it was handed out: cpu.stat's usage_usec (always
  // there), memory.peak (with the memory controller; such a cgroup is not
  // handed out twice).
  core::ResourceUsage usage() const;
  // Removes it (and any cgroup made in it) once it is empty; false while a
  // process is left.
  bool remove();
  // Sets its memory.max, cpu.weight and pids.max to `limits`, and those it
  // does not set back to no limit (cpu.weight 100) where an earlier run set
  // them. An error (unavailable) names the first limit whose controller the
  // tree does not enable, or a limit file that could not be written.
  core::Result<void> limit(const core::ResourceLimits& limits);
  // Its CPU time when it was handed out (see usage()), for a next image of
  // taskd, which takes it over with that.
  std::optional<std::chrono::microseconds> cpu_before() const { return cpu_before_; }
  static RunCgroup adopted(std::filesystem::path path, std::optional<std::chrono::microseconds> cpu_before);

 private:
  friend class CgroupTree;
  // cpu.stat's usage_usec: all it counted since it was made.
  std::optional<std::chrono::microseconds> cpu_total() const;
  std::filesystem::path path_;
  int fd_ = -1;
  // Its CPU time when it was handed out; none when that could not be read.
  std::optional<std::chrono::microseconds> cpu_before_ = std::chrono::microseconds{0};
  bool limited_ = false;  // a limit may be set in it
};

// The cgroups of this process's runs: `taskd-PID-START` in taskd's own
// cgroup, made when it opens and removed with it. Out of the root cgroup,
// taskd moves into the tree's leaf `taskd` while it is open, so that the
// controllers of the tasks' limits can reach the runs' cgroups.
class CgroupTree {
 public:
  // Opens the tree, or says why taskd cannot make cgroups here.
  static core::Result<CgroupTree> open();
  CgroupTree(CgroupTree&& other) noexcept;
  CgroupTree& operator=(CgroupTree&&) = delete;
  CgroupTree(const CgroupTree&) = delete;
  ~CgroupTree();

  // A cgroup for a run: an empty one released before, or a new one
  // (making and removing a cgroup cost a fifth of a short run's dispatch).
  core::Result<RunCgroup> run_cgroup();
  // Takes back a run's cgroup once it is empty, for another run (or removes
  // it, when it keeps a peak that cannot be reset); false, and `cgroup` left
  // as it is, while a process is left in it.
  bool release(RunCgroup& cgroup);
  // Kills what is left in the trees of taskd processes that died beside
  // this one (kill -9, and their watchdogs with them), and removes them.
  void end_abandoned() const;
  // Kills what is in the runs' cgroups and removes the tree, the calling
  // process leaving it first: taskd as it exits, or its watchdog once taskd
  // is gone.
  void take_down() const;
  const std::filesystem::path& path() const { return path_; }
  // What a next image of taskd needs to go on with the tree: its path, the
  // cgroup taskd left for its leaf, and how many run cgroups it made.
  struct Handed {
    std::filesystem::path path;
    std::filesystem::path home;
    std::uint64_t made = 0;
  };
  Handed handed() const { return {path_, home_, made_}; }
  // Whether `handed` names this process's tree (an error says why not).
  static core::Result<void> check_handed(const Handed& handed);
  // The tree a previous image of this process handed over, once checked.
  static CgroupTree adopt(Handed handed);

 private:
  CgroupTree(std::filesystem::path path, std::filesystem::path home) : path_(std::move(path)), home_(std::move(home)) {}
  std::filesystem::path path_;
  std::filesystem::path home_;  // the cgroup taskd left for the tree's leaf; empty if it stayed
  std::vector<RunCgroup> idle_;
  std::uint64_t made_ = 0;
  std::optional<bool> keeps_peak_;  // whether its run cgroups have memory.peak (found at the first release)
};

// How a run's descendants are kept with it (--containment).
enum class Containment {
  automatic,  // a cgroup where taskd can make one, else subreaper
  cgroup,     // a cgroup, or taskd refuses to run (exit 69)
  subreaper,  // the process group, and the attempt token of those that leave it
};
core::Result<Containment> parse_containment(std::string_view text);

// The containment a taskd process has: the cgroups of its runs, or none,
// and in words, for the logs and `status` ("cgroup PATH", "subreaper (WHY)").
struct ContainmentChoice {
  std::optional<CgroupTree> cgroups;
  std::string description;
};
// The containment `containment` asks for: without cgroups for subreaper, or
// (automatic) where taskd cannot make them; an error (unavailable) when
// cgroup was asked for and taskd cannot make them. With cgroups, what the
// runs of taskd processes that died beside this one left is ended first.
core::Result<ContainmentChoice> choose_containment(Containment containment);

// Why runs without a cgroup cannot have `limits`: the first limit, the
// controller it needs, and `why` there is no cgroup; empty without limits.
std::string limits_without_cgroup(const core::ResourceLimits& limits, std::string_view why);
// Why a taskd process started here (--containment auto or cgroup) could not
// apply `limits` to its runs; empty when it could. It makes no cgroup.
std::string limits_unavailable_here(const core::ResourceLimits& limits);

}  // namespace taskd::exec
