#pragma once
// Containment by cgroup v2 (taskd(1), CONTAINMENT): each run's processes in
// a cgroup of their own, which no descendant leaves by setsid, a double fork
// or a cleared environment; the run ended whole (cgroup.kill) and its CPU
// time and peak memory read from the cgroup's files. Where taskd may make
// cgroups: the cgroup2 hierarchy is mounted (alone, or beside v1 at
// /sys/fs/cgroup/unified) and taskd's own cgroup in it is writable to it
// (root on such a host, a systemd unit with Delegate=yes, a user's
// delegated subtree).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/usage.hpp"

namespace taskd::exec {

// One run's cgroup.
class RunCgroup {
 public:
  RunCgroup(std::filesystem::path path, int procs_fd) : path_(std::move(path)), procs_fd_(procs_fd) {}
  RunCgroup(RunCgroup&& other) noexcept;
  RunCgroup& operator=(RunCgroup&& other) noexcept;
  RunCgroup(const RunCgroup&) = delete;
  RunCgroup& operator=(const RunCgroup&) = delete;
  ~RunCgroup();

  // Its cgroup.procs, open for writing: a child writes "0" to it to move
  // itself in before it executes.
  int procs_fd() const { return procs_fd_; }
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

 private:
  friend class CgroupTree;
  // cpu.stat's usage_usec: all it counted since it was made.
  std::optional<std::chrono::microseconds> cpu_total() const;
  std::filesystem::path path_;
  int procs_fd_ = -1;
  // Its CPU time when it was handed out; none when that could not be read.
  std::optional<std::chrono::microseconds> cpu_before_ = std::chrono::microseconds{0};
};

// The cgroups of this process's runs: `taskd-PID-START` in taskd's own
// cgroup, made when it opens and removed with it.
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
  // this one (kill -9: no destructor ran), and removes them.
  void end_abandoned() const;
  const std::filesystem::path& path() const { return path_; }

 private:
  explicit CgroupTree(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
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

}  // namespace taskd::exec
