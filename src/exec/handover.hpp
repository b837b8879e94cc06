#pragma once
// The record an upgrading taskd hands its next image (kill -USR2): what it
// holds of each run in flight, in a sealed memfd that the new image finds
// by the number in $TASKD_ADOPT_FD. The memfd, the children's output pipes
// and the watchdog's descriptors are the only ones kept across execve;
// pidfds are not (each child is still this process's child, unreaped, so
// its pid names it alone: the new image opens a pidfd for it again).
//
// A record is a sequence of fields, each its length in decimal, a colon and
// its bytes. It begins with "taskd-handover", then the runs' shutdown list
// (see ShutdownList), whose layout never changes, then the version of the
// rest, which only the same version reads.
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace taskd::exec {

inline constexpr std::string_view handover_variable = "TASKD_ADOPT_FD";
inline constexpr std::string_view handover_magic = "taskd-handover";
inline constexpr std::int64_t handover_version = 1;
// `taskd --handover-format` prints handover_version: asked before an upgrade
// hands runs over to a binary (see reexec.hpp).
inline constexpr std::string_view handover_format_option = "--handover-format";

class RecordWriter {
 public:
  void text(std::string_view value);
  void number(std::int64_t value);
  void flag(bool value) { number(value ? 1 : 0); }
  // A flag, then the value when there is one.
  void optional(const std::optional<std::int64_t>& value);
  // In nanoseconds of the steady clock, which execve keeps.
  void steady(std::chrono::steady_clock::time_point at);
  const std::string& record() const { return record_; }

 private:
  std::string record_;
};

// Reads fields in order; an error names the field that is not as expected.
class RecordReader {
 public:
  explicit RecordReader(std::string_view record) : rest_(record) {}
  core::Result<std::string> text(std::string_view what);
  core::Result<std::int64_t> number(std::string_view what);
  core::Result<bool> flag(std::string_view what);
  // A number within [low, high].
  core::Result<std::int64_t> number_in(std::string_view what, std::int64_t low, std::int64_t high);
  core::Result<std::optional<std::int64_t>> optional(std::string_view what);
  // A steady time at most `latest` nanoseconds.
  core::Result<std::chrono::steady_clock::time_point> steady(
      std::string_view what, std::int64_t latest = std::numeric_limits<std::int64_t>::max());
  bool at_end() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

// What ends a run as taskd's shutdown does, whatever the version of the
// taskd that reads it: its run and attempt, its child (and that child's
// output pipe, to close), its kill grace, and what its run and its task
// go back to as the run is queued again for its slot.
struct ShutdownEntry {
  std::int64_t run_id = 0;
  std::int64_t task_id = 0;
  std::string task;
  std::string attempt_uid;
  std::int64_t trigger = 0;  // as core::Trigger numbers it
  std::int64_t pid = 0;
  std::int64_t output_fd = -1;
  std::int64_t kill_grace_seconds = 0;
  std::int64_t run_attempt_no = 0;
  std::int64_t run_index = 0;
  std::int64_t before_attempt_no = 0;
  std::int64_t before_run_index = 0;
  std::optional<std::int64_t> before_last_run_at_ms;
};
// With the descriptors kept besides the runs' (the watchdog's), to close,
// and the tree of the runs' cgroups (with its home; empty: none), to take down.
struct ShutdownList {
  std::vector<ShutdownEntry> runs;
  std::vector<std::int64_t> other_fds;
  std::string cgroup_tree;
  std::string cgroup_home;
};
void write_shutdown_list(RecordWriter& record, const ShutdownList& list);
core::Result<ShutdownList> read_shutdown_list(RecordReader& record);

// Ends the children of `list` as taskd's shutdown does (SIGTERM to each
// one's process group, SIGKILL after its grace), reaps them, and takes down
// the tree of their cgroups. The descriptors are the caller's to close
// (see Handover::inherited).
void end_children(const ShutdownList& list);

// Writes `record` to a new memfd, sealed against any change, and returns
// its descriptor (close-on-exec, like every descriptor until keep_across_exec).
core::Result<int> seal_record(std::string_view record);

// Sets (keep: clears) FD_CLOEXEC on each of `fds`.
void keep_across_exec(std::span<const int> fds, bool keep);

// What a previous image of this process handed over: the record (an error
// when $TASKD_ADOPT_FD names no readable sealed memfd), and the descriptors
// above 2 it left open across execve (the record's excepted), all of them
// close-on-exec from now on. Only these may a record name; those the new
// image does not take over are closed (close_inherited).
struct Handover {
  core::Result<std::string> record;
  std::vector<int> inherited;  // ascending
  bool inherits(std::int64_t fd) const;
};

// The hand-over of a previous image, read from the descriptor
// $TASKD_ADOPT_FD names, which is closed; the variable is removed from the
// environment first, so that no child inherits it. None without the variable.
std::optional<Handover> take_handover();

// Closes each of `inherited` but those in `kept`.
void close_inherited(std::span<const int> inherited, std::span<const int> kept);

// Gives up what a previous image handed over: closes every one of
// `inherited` (the watchdog, told no goodbye, ends what it watched and
// takes down the tree of cgroups, whose name a new one takes next), then
// reaps this process's children as they exit, for up to `bound`.
void give_up_inherited(std::span<const int> inherited, std::chrono::milliseconds bound);

}  // namespace taskd::exec
