#pragma once
// The two files a run shares with taskd: $TASKD_STATE (kept between runs, so
// a timeboxed task resumes where it stopped) and $TASKD_STATUS (a
// user-friendly status line). They live in a private directory that a taskd
// process makes for its runs at its first run and removes when it is done;
// each run's files leave their names when the run ends. (A directory per run
// cost a synchronous rmdir per run, and a new state file per run an inode
// allocation, milliseconds and tens of microseconds on ext4: see
// BENCHMARKS.md.)
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "exec/run_as.hpp"

namespace taskd::exec {

class RunFiles;

// What a run left in its files.
struct RunLeftovers {
  core::Result<std::string> state;  // the state file as the run left it; an error when it outgrew the limit
  std::string status_line;          // the last non-empty line of the status file, or ""
};

// The private directory (0700) in $TMPDIR, else /tmp, that holds the files
// of this process's runs; removed with everything in it when destroyed.
// The files of a run as another user (--user) are that user's, in a
// directory of that user's in a second directory, 0711 so that each user
// reaches only its own (the first stays 0700: a user may not guess the
// names of root's files): there taskd follows no symbolic link and reads
// only files the user owns, since the user can put anything there.
class RunDirectory {
 public:
  static core::Result<RunDirectory> create();
  RunDirectory(RunDirectory&& other) noexcept;
  RunDirectory& operator=(RunDirectory&&) = delete;
  RunDirectory(const RunDirectory&) = delete;
  ~RunDirectory();

  // The files of run `run_id`: the state file, holding `state`, and the
  // name of the status file, which the run makes if it writes a status;
  // both `owner`'s when given. If something (a /tmp cleaner) removed the
  // directory, a new one takes its place.
  core::Result<RunFiles> files_for(std::int64_t run_id, std::string_view state, const Credentials* owner = nullptr);

  // Reads what the run left in `files` (a state over `state_limit` bytes is
  // an error) and takes the files away. The state file, emptied, becomes the
  // next run's, unless it is no longer the plain file taskd gave the run or
  // some process (one the run left behind) still has it open.
  RunLeftovers collect(RunFiles files, std::size_t state_limit);

  // What a next image of taskd needs to go on with the directory: its path,
  // its spare state files and how many it named.
  struct Handed {
    std::string path;
    std::vector<std::string> spares;
    std::uint64_t spares_named = 0;
  };
  Handed handed() const { return {path_, spares_, spares_named_}; }
  // Removes the users' directories, which a next image is not handed (runs
  // are handed over only while none runs as a user): it would leave them
  // behind. A user's next run here makes its directory anew.
  void remove_users_directories();
  // The directory a previous image of this process handed over; an error
  // unless it is a directory of this user's, readable by it alone.
  static core::Result<RunDirectory> adopt(Handed handed);
  // The files files_for() gave run `run_id` (in a previous image too).
  RunFiles files_of(std::int64_t run_id) const;

 private:
  explicit RunDirectory(std::string path) : path_(std::move(path)) {}
  // A new private directory in place of one that went (a /tmp cleaner):
  // never made again under the same name, someone else may own it by now.
  core::Result<void> renew();
  // Moves `name` in `from_fd` (a path with AT_FDCWD) to a new name in the
  // private directory, renewed if it went; none when `name` is not there.
  std::optional<std::string> move_to_spare(int from_fd, const char* name);
  // The files of `run_id` (`owner`'s when given), the state file holding
  // `state`; none (errno says why) when they cannot be made.
  std::optional<RunFiles> place_files(std::int64_t run_id, std::string_view state, const Credentials* owner);
  // Gives the state file `path` the contents `state`: a spare file renamed,
  // or a new one. False (and errno says why) when it cannot.
  bool place_state_file(const std::string& path, std::string_view state);
  // Moves `state_path` out of the run's name; reads it, and keeps it as a
  // spare when it may serve again.
  core::Result<std::string> take_state_file(const std::string& state_path, std::size_t state_limit);

  // A user's directory of run files, made, checked and opened at the user's
  // first run in this process: later runs use the descriptor (a run as a
  // user costs no more directory work than a run of taskd's own).
  struct UserDirectory {
    std::string path;
    int fd;
  };
  // `owner`'s directory; nullptr (errno says why) when it cannot be made,
  // or what is there is not the owner's alone.
  const UserDirectory* user_directory(const Credentials& owner);
  // Closes the directory of `uid`, which is gone (a /tmp cleaner): the
  // user's next run makes one anew, in a new directory of the users'
  // directories, never again under the same name (someone else may own it
  // by now).
  void forget_user_directory(uid_t uid);
  // Gives the state file `name` of `owner`'s in `dir` the contents `state`:
  // a spare of the owner's, or a new file. False (errno says why) when it cannot.
  bool place_owned_state_file(const UserDirectory& dir, const std::string& name, std::string_view state,
                              const Credentials& owner);
  // As take_state_file, for the state file `name` in `dir` of a run as
  // `owner`: read only if it is a plain file the owner owns.
  core::Result<std::string> take_owned_state_file(const UserDirectory& dir, const char* name, uid_t owner,
                                                  std::size_t state_limit);

  std::string path_;
  std::string users_path_;  // the 0711 directory of the users' directories; "" until a first run as a user
  std::map<uid_t, UserDirectory> user_directories_;
  std::vector<std::string> retired_users_paths_;  // earlier ones, left when a user's directory went
  std::vector<std::string> spares_;  // emptied state files of ended runs, for the next runs
  // Those of runs as users, by owner and group (in path_, out of the users' reach).
  std::map<std::pair<uid_t, gid_t>, std::vector<std::string>> user_spares_;
  std::uint64_t spares_named_ = 0;
};

class RunFiles {
 public:
  RunFiles(RunFiles&& other) noexcept;
  RunFiles& operator=(RunFiles&&) = delete;
  RunFiles(const RunFiles&) = delete;
  // Removes the files of a run that was never collected.
  ~RunFiles();

  const std::string& state_path() const { return state_path_; }
  const std::string& status_path() const { return status_path_; }
  // Whether the run runs as another user, whose directory holds the files.
  bool owned_by_a_user() const { return owner_.has_value(); }

 private:
  friend class RunDirectory;
  RunFiles(std::string state_path, std::string status_path, std::optional<uid_t> owner = std::nullopt)
      : state_path_(std::move(state_path)), status_path_(std::move(status_path)), owner_(owner) {}
  std::string state_path_;
  std::string status_path_;
  std::optional<uid_t> owner_;  // the user the run ran as, who owns the files; none: taskd's own
};

// The last non-empty line of `text`, without its newline, at most 500 bytes
// cut between characters, with each byte that is not UTF-8 as U+FFFD: it is
// kept as text (a reason), which a server refuses unless it is UTF-8.
std::string last_line(std::string_view text);

}  // namespace taskd::exec
