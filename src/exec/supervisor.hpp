#pragma once
// Watches the children taskd started: collects their output, enforces each
// timebox (SIGTERM to the process group at the deadline, SIGKILL after the
// grace), reaps them, and cleans up what they left running in their group.
// A child stopped by its timebox or by taskd's shutdown, or killed by a
// signal from outside, takes with it the processes that left its group
// (setsid, a double fork): with a CgroupTree, every process in the run's
// cgroup; without, those that kept its $TASKD_ATTEMPT_UID, in their own
// groups. They get the same signals. If taskd dies without ending them, its
// watchdog (see watchdog.hpp) ends them all.
#include <chrono>
#include <cstdint>
#include <optional>
#include <poll.h>
#include <span>
#include <string>
#include <vector>

#include "exec/cgroup.hpp"
#include "exec/output_buffer.hpp"
#include "exec/runner.hpp"
#include "exec/watchdog.hpp"

namespace taskd::exec {

class RecordReader;
class RecordWriter;
struct Handover;

// A child as a next image of taskd takes it over (see Supervisor).
struct HandedChild {
  std::uint64_t key = 0;
  pid_t pid = 0;
  int output_fd = -1;  // kept across execve
  SteadyTime deadline;
  std::chrono::seconds kill_grace{0};
  SteadyTime lease_end;
  bool terminated = false, killed = false, stopped = false, fenced = false;
  OutputBuffer::Kept output;
  std::string token;
  std::string cgroup;  // its run's cgroup's path; empty: none
  std::optional<std::chrono::microseconds> cgroup_cpu_before;
  std::optional<std::size_t> watched;
};

// What a Supervisor hands a next image of taskd.
struct SupervisorHandover {
  std::string containment;  // as ContainmentChoice describes it
  std::optional<Watchdog::Handed> watchdog;
  std::optional<CgroupTree::Handed> cgroups;
  std::vector<HandedChild> children;
};
void write_supervisor(RecordWriter& record, const SupervisorHandover& handover);
core::Result<SupervisorHandover> read_supervisor(RecordReader& record);
// The descriptors to keep across execve: the children's output pipes and the watchdog's.
std::vector<int> kept_descriptors(const SupervisorHandover& handover);

class Supervisor final : public Runner {
 public:
  // Makes taskd the subreaper of its children's orphans, so what a run leaves
  // behind can be waited for and counted as gone, and asks for short time
  // slices (see scheduling.hpp). With the containment's cgroups, each run has
  // a cgroup of its own in them; without, a run with resource limits is not
  // started (its error says why, with the containment's description). Forks
  // the watchdog first (if the system refuses a process, the runs go without
  // one, and will hardly start either). With the `lease` of runs on a
  // server, the watchdog ends a run a quarter lease past the SIGKILL of its
  // fencing, should taskd not have held its lease by then (frozen, stuck):
  // the server's lease, which ends half a lease past the fencing, has not.
  explicit Supervisor(ContainmentChoice containment = {std::nullopt, "subreaper"},
                      std::optional<std::chrono::milliseconds> lease = std::nullopt);
  // Takes over the children, the watchdog and the cgroups that a previous
  // image of this process handed over (see adopt()).
  struct Adopted;
  Supervisor(Adopted adopted, std::optional<std::chrono::milliseconds> lease);
  // Checks what was handed over (each descriptor one `handed` inherited,
  // each child this process's, its cgroup in the tree), then builds what
  // takes it over; an error leaves everything as it was.
  static core::Result<Adopted> adopt(SupervisorHandover handover, const Handover& handed);
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;
  // Kills (SIGKILL) and reaps every child and group still there, then lets
  // the watchdog go.
  ~Supervisor();

  core::Result<StartedProcess> start(std::uint64_t key, const SpawnRequest& request, const ChildLimits& limits) override;
  std::vector<ChildResult> wait_for_exits(SteadyTime until) override;
  void hold_lease(std::uint64_t key, SteadyTime until) override;
  std::optional<SteadyTime> next_lease_action() const override;
  std::optional<OutputSoFar> output_so_far(std::uint64_t key) const override;
  // Waits until a child ends, one of `watched` is ready (its revents say
  // so), or `until` has come; returns the children that ended, maybe none.
  // Timeboxes are enforced meanwhile.
  std::vector<ChildResult> wait_until(SteadyTime until, std::span<pollfd> watched);
  // Asks every child to stop as taskd shuts down: SIGTERM to its process
  // group now, SIGKILL after its grace. Their results say `stopped`.
  void stop_all();
  // Kills what is left in a group after its grace.
  void finish_lingering() override;
  std::size_t running() const override { return children_.size(); }
  // Whether a group a child left is still waited for (see finish_lingering).
  bool lingers() const { return !lingering_.empty(); }
  // What a next image of taskd takes over; with nothing lingering.
  SupervisorHandover hand_over() const;
  // The description of its containment, as ContainmentChoice gives it.
  const std::string& containment() const { return containment_; }

 private:
  struct Child {
    std::uint64_t key;
    pid_t pid;
    int output_fd;
    int exit_fd;  // a pidfd that polls readable when the child exits; -1 if unsupported
    SteadyTime deadline;  // of its timebox; brought forward to the lease's end when fenced
    std::chrono::seconds kill_grace;
    SteadyTime lease_end = SteadyTime::max();
    bool terminated = false;  // SIGTERM sent at the deadline
    bool killed = false;      // SIGKILL sent after the grace
    bool stopped = false;     // terminated because taskd shuts down, not by its timebox
    bool fenced = false;      // terminated because its lease ran out
    OutputBuffer output;
    std::string token;  // its "TASKD_ATTEMPT_UID=..." environment entry; empty if none
    std::optional<RunCgroup> cgroup;  // its run's cgroup, with a CgroupTree
    std::optional<std::size_t> watched;  // its run's entry with the watchdog (with cgroups: on a server only)
  };
  // A group (or a run's cgroup) whose leader has ended but whose other
  // members may not have.
  struct Lingering {
    pid_t group;
    SteadyTime kill_at;
    std::optional<RunCgroup> cgroup;
    std::optional<std::size_t> watched;  // the watchdog's entry of the run it is of
  };

  // The cgroup of a run with `resources` (none without cgroups), or why the
  // run cannot have them.
  core::Result<std::optional<RunCgroup>> run_cgroup(const core::ResourceLimits& resources);
  void enforce_deadlines(SteadyTime now);
  // SIGKILL to the child's group and cgroup.
  static void kill_child(const Child& child);
  // Whether a lingering group is done with: gone, or killed after its grace.
  bool finish(Lingering& lingering, SteadyTime now);
  // Sends SIGTERM to the child's group and to the groups that left it with
  // its token, which linger until the grace ends.
  void terminate(Child& child, SteadyTime now);
  // The groups that left the child's group with its token: SIGKILL now if
  // the grace is over, else SIGTERM, lingering until it is.
  void stop_escaped(const Child& child, SteadyTime now);
  std::vector<ChildResult> reap_exited(SteadyTime now);
  // Sets up what runs and watchdog do not carry: the subreaper, the slices.
  void become_supervisor();
  // Reaps orphans that left their run's process group (a daemonizing
  // grandchild) and were handed to taskd as their subreaper.
  void reap_strays();
  void poll_once(SteadyTime now, SteadyTime until, std::span<pollfd> watched);
  SteadyTime next_action_time() const;
  // Tells the watchdog that a run is over once neither its child nor a
  // group it left is waited for.
  void forget_if_over(std::optional<std::size_t> watched);

  // How often the watchdog looks for runs past their backstop.
  static constexpr std::chrono::milliseconds min_backstop_scan{50}, max_backstop_scan{1000};

  std::optional<CgroupTree> cgroups_;
  std::string containment_;  // as ContainmentChoice describes it
  std::optional<std::chrono::milliseconds> backstop_after_;  // past a fenced run's SIGKILL; a quarter lease
  std::vector<Child> children_;
  std::vector<Lingering> lingering_;
  // After cgroups_: gone (and told goodbye) before the tree is taken down.
  std::optional<Watchdog> watchdog_;

 public:
  struct Adopted {
    std::string containment;
    std::optional<CgroupTree> cgroups;
    std::optional<Watchdog> watchdog;
    std::vector<Child> children;
  };
};

}  // namespace taskd::exec
