#include "exec/cgroup.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

#include "exec/process_identity.hpp"

namespace taskd::exec {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// How long an abandoned cgroup's killed processes are waited for before it
// is left for the next taskd to remove.
constexpr auto abandoned_wait = 2s;

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

bool write_file(const fs::path& path, std::string_view text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return written;
}

// A cgroup's directory, open for a child to be born in and its files to be
// read; -1 (errno says why) when it cannot be.
int open_cgroup(const fs::path& path) { return ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); }

// What a run's cgroup file read at each run's start or end holds: a few
// lines, read in one call into a buffer of its own, without a path to build.
struct CgroupFile {
  std::array<char, 1024> bytes;
  std::size_t size = 0;
  std::string_view text() const { return {bytes.data(), size}; }
};

// `name` in the cgroup open as `dir`; nullopt (errno says why) when it cannot be read.
std::optional<CgroupFile> read_cgroup_file(int dir, const char* name) {
  int fd = ::openat(dir, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  CgroupFile file;
  ssize_t n = ::read(fd, file.bytes.data(), file.bytes.size());
  int error = errno;
  ::close(fd);
  if (n < 0) {
    errno = error;
    return std::nullopt;
  }
  file.size = static_cast<std::size_t>(n);
  return file;
}

std::optional<std::uint64_t> number_at_start(std::string_view text) {
  std::uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  return value;
}

// The number after `key ` in a flat-keyed file ("usage_usec 1234\n...").
std::optional<std::uint64_t> keyed_value(std::string_view text, std::string_view key) {
  while (!text.empty()) {
    auto line_end = std::min(text.find('\n'), text.size());
    auto line = text.substr(0, line_end);
    text.remove_prefix(std::min(line_end + 1, text.size()));
    if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == ' ')
      return number_at_start(line.substr(key.size() + 1));
  }
  return std::nullopt;
}

std::optional<std::uint64_t> single_value(int dir, const char* name) {
  auto file = read_cgroup_file(dir, name);
  return file ? number_at_start(file->text()) : std::nullopt;
}

// The processes in `cgroup`, never 0 (the kernel prints 0 for one that
// exited while it listed them, and kill(0) is taskd's own process group),
// init, or taskd.
std::vector<pid_t> pids_in(const fs::path& cgroup) {
  std::vector<pid_t> pids;
  std::istringstream lines(read_file(cgroup / "cgroup.procs"));
  for (pid_t pid = 0; lines >> pid;) {
    if (pid > 1 && pid != ::getpid()) pids.push_back(pid);
  }
  return pids;
}

// Removes `cgroup` and the cgroups in it (a run's own taskd makes some),
// deepest first; whether it is gone.
bool remove_cgroup(const fs::path& cgroup) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(cgroup, error)) {
    if (entry.is_directory()) remove_cgroup(entry.path());
  }
  return ::rmdir(cgroup.c_str()) == 0 || errno == ENOENT;
}

// Where the cgroup2 hierarchy is mounted: /sys/fs/cgroup on a pure v2
// host, /sys/fs/cgroup/unified beside v1; empty when it is not.
fs::path cgroup2_mount() {
  std::ifstream mounts("/proc/self/mountinfo");
  for (std::string line; std::getline(mounts, line);) {
    // "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS"
    auto separator = line.find(" - ");
    if (separator == std::string::npos || !line.substr(separator + 3).starts_with("cgroup2 ")) continue;
    std::istringstream fields(line.substr(0, separator));
    std::string id, parent, device, root, mount_point;
    if (fields >> id >> parent >> device >> root >> mount_point) return mount_point;
  }
  return {};
}

// This process's cgroup in the v2 hierarchy ("0::/PATH" in /proc/self/cgroup).
std::optional<std::string> own_cgroup() {
  std::ifstream groups("/proc/self/cgroup");
  for (std::string line; std::getline(groups, line);) {
    if (line.starts_with("0::")) return line.substr(3);
  }
  return std::nullopt;
}

// The cgroup this process is in (where its tree goes), or why there is none.
core::Result<fs::path> own_cgroup_path() {
  auto mount = cgroup2_mount();
  if (mount.empty()) return core::fail(core::ErrorKind::unavailable, "no cgroup2 hierarchy is mounted");
  auto own = own_cgroup();
  if (!own) return core::fail(core::ErrorKind::unavailable, "this process is in no cgroup of the v2 hierarchy");
  auto relative = fs::path(*own).relative_path();
  return relative.empty() ? mount : mount / relative;  // no trailing '/' for the root
}

// Where a limit goes in a run's cgroup, and what that file holds without one.
struct LimitFile {
  core::LimitKind kind;
  std::string_view controller;
  std::string_view file;
  std::string_view unlimited;
};
constexpr std::array<LimitFile, 3> limit_files{{{core::LimitKind::memory_max, "memory", "memory.max", "max"},
                                               {core::LimitKind::cpu_weight, "cpu", "cpu.weight", "100"},
                                               {core::LimitKind::tasks_max, "pids", "pids.max", "max"}}};

// The controllers a cgroup.controllers or cgroup.subtree_control file lists.
std::vector<std::string> controllers_in(const fs::path& file) {
  std::vector<std::string> controllers;
  std::istringstream words(read_file(file));
  for (std::string word; words >> word;) controllers.push_back(word);
  return controllers;
}

std::string controllers_text(const std::vector<std::string>& controllers) {
  return controllers.empty() ? "none" : fmt::format("{}", fmt::join(controllers, " "));
}

bool has_controller(const std::vector<std::string>& controllers, std::string_view controller) {
  return std::ranges::find(controllers, controller) != controllers.end();
}

// Why a cgroup made in `parent` cannot have `limits`: the first limit whose
// controller `parent` does not enable for the cgroups in it (`enabled`, its
// cgroup.subtree_control); empty when it enables them all.
std::string missing_controller(const core::ResourceLimits& limits, const fs::path& parent,
                               const std::vector<std::string>& enabled) {
  for (const auto& limit : limit_files) {
    auto value = core::limit_of(limits, limit.kind);
    if (!value || has_controller(enabled, limit.controller)) continue;
    return fmt::format("{} needs the cgroup {} controller, which {} does not enable for the cgroups in it "
                       "(cgroup.controllers: {}; cgroup.subtree_control: {})",
                       core::describe_limit(limit.kind, *value), limit.controller, parent.string(),
                       controllers_text(controllers_in(parent / "cgroup.controllers")), controllers_text(enabled));
  }
  return "";
}

// Turns the controllers of the tasks' limits on ('+') or off ('-') for the
// cgroups in `cgroup`, where they reach it (the memory controller also gives
// each run memory.peak); one at a time, as a write that names one the cgroup
// lacks fails whole. Nothing to lose where they do not: a run with a limit
// then fails.
void switch_limit_controllers(const fs::path& cgroup, char on_or_off) {
  for (const auto& limit : limit_files)
    write_file(cgroup / "cgroup.subtree_control", fmt::format("{}{}", on_or_off, limit.controller));
}

// cgroup v2 lets no controller reach the cgroups in one that holds processes
// of its own, the root aside ("no internal processes"). So taskd moves into a
// leaf of its tree, `taskd`: the cgroup it left can then enable the limits'
// controllers for the tree where taskd was alone in it (a systemd unit with
// Delegate=yes; not a login session or cron's cgroup).
bool move_into_leaf(const fs::path& tree) {
  auto leaf = tree / "taskd";
  if (::mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) return false;
  return write_file(leaf / "cgroup.procs", "0");
}

// "taskd-PID-START": the tree of a taskd process.
std::string tree_name(pid_t pid, std::int64_t start_ticks) { return fmt::format("taskd-{}-{}", pid, start_ticks); }

// The process whose tree `name` is, if it is one.
std::optional<std::pair<pid_t, std::int64_t>> tree_owner(const std::string& name) {
  pid_t pid = 0;
  std::int64_t start = 0;
  if (std::sscanf(name.c_str(), "taskd-%d-%ld", &pid, &start) != 2 || name != tree_name(pid, start))
    return std::nullopt;
  return std::pair{pid, start};
}

// Kills what is in the cgroups under `tree` and removes them, waiting for
// them to empty until `give_up`; whether all are gone.
bool end_tree(const fs::path& tree, std::chrono::steady_clock::time_point give_up) {
  std::error_code error;
  std::vector<RunCgroup> runs;
  for (const auto& entry : fs::directory_iterator(tree, error)) {
    if (!entry.is_directory()) continue;
    runs.emplace_back(entry.path(), -1);
    runs.back().kill_all();
  }
  for (auto& run : runs) {
    while (!run.remove() && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(10ms);
  }
  return remove_cgroup(tree);
}

}  // namespace

RunCgroup::RunCgroup(RunCgroup&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      cpu_before_(other.cpu_before_),
      limited_(other.limited_) {}

RunCgroup& RunCgroup::operator=(RunCgroup&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    cpu_before_ = other.cpu_before_;
    limited_ = other.limited_;
  }
  return *this;
}

RunCgroup::~RunCgroup() {
  if (fd_ >= 0) ::close(fd_);
}

void RunCgroup::signal_all(int signal) const {
  for (pid_t pid : pids_in(path_)) ::kill(pid, signal);
}

void RunCgroup::kill_all() const {
  if (write_file(path_ / "cgroup.kill", "1")) return;
  // Before cgroup.kill: frozen, none can fork while each is killed.
  write_file(path_ / "cgroup.freeze", "1");
  for (pid_t pid : pids_in(path_)) ::kill(pid, SIGKILL);
  write_file(path_ / "cgroup.freeze", "0");
}

bool RunCgroup::populated() const {
  auto events = read_cgroup_file(fd_, "cgroup.events");
  // Unreadable (out of descriptors, say): taken for populated, never reused
  // with a process in it; gone: empty.
  if (!events) return errno != ENOENT;
  return keyed_value(events->text(), "populated") != 0;
}

std::optional<std::chrono::microseconds> RunCgroup::cpu_total() const {
  auto stat = read_cgroup_file(fd_, "cpu.stat");
  auto cpu = stat ? keyed_value(stat->text(), "usage_usec") : std::nullopt;
  if (!cpu) return std::nullopt;
  return std::chrono::microseconds(static_cast<std::int64_t>(*cpu));
}

core::ResourceUsage RunCgroup::usage() const {
  core::ResourceUsage usage;
  auto cpu = cpu_total();
  if (cpu && cpu_before_) usage.cpu = *cpu - *cpu_before_;
  if (auto peak = single_value(fd_, "memory.peak")) usage.peak_memory_bytes = static_cast<std::int64_t>(*peak);
  return usage;
}

bool RunCgroup::remove() {
  if (!remove_cgroup(path_)) return false;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  return true;
}

core::Result<void> RunCgroup::limit(const core::ResourceLimits& limits) {
  // A new cgroup, or one whose runs had no limit: nothing to set or reset.
  if (!limits.any() && !limited_) return {};
  auto parent = path_.parent_path();
  auto enabled = controllers_in(parent / "cgroup.subtree_control");
  if (auto missing = missing_controller(limits, parent, enabled); !missing.empty())
    return core::fail(core::ErrorKind::unavailable, missing);
  limited_ = true;
  for (const auto& limit : limit_files) {
    if (!has_controller(enabled, limit.controller)) continue;  // neither set nor to reset
    auto value = core::limit_of(limits, limit.kind);
    auto text = value ? std::to_string(*value) : std::string(limit.unlimited);
    if (!write_file(path_ / limit.file, text))
      return core::fail(core::ErrorKind::unavailable, fmt::format("cannot write {} to {}: {}", text,
                                                                  (path_ / limit.file).string(), std::strerror(errno)));
  }
  limited_ = limits.any();
  return {};
}

core::Result<CgroupTree> CgroupTree::open() {
  auto parent = TRY(own_cgroup_path());
  // The start time tells this process's tree from that of a dead one with its
  // pid, which the next taskd ends.
  auto start = process_start_ticks(::getpid());
  if (start <= 0) return core::fail(core::ErrorKind::unavailable, "this process's start time cannot be read");
  auto path = parent / tree_name(::getpid(), start);
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
    return core::fail(core::ErrorKind::unavailable,
                      fmt::format("cannot make a cgroup in {}: {}", path.parent_path().string(), std::strerror(errno)));
  fs::path home;
  if (parent != cgroup2_mount() && move_into_leaf(path)) {
    home = parent;
    switch_limit_controllers(home, '+');
  }
  switch_limit_controllers(path, '+');
  return CgroupTree(std::move(path), std::move(home));
}

core::Result<void> CgroupTree::check_handed(const Handed& handed) {
  auto start = process_start_ticks(::getpid());
  auto own = own_cgroup_path();
  // Where open() left this process: in the tree's leaf when it left a home
  // (the tree's parent), else in the tree's parent.
  bool placed =
      own && (handed.home.empty() ? *own == handed.path.parent_path()
                                  : handed.home == handed.path.parent_path() && *own == handed.path / "taskd");
  std::error_code error;
  if (handed.path.filename() != tree_name(::getpid(), start) || !placed || !fs::is_directory(handed.path, error))
    return core::fail(core::ErrorKind::bad_input,
                      fmt::format("{} is not this process's tree of cgroups", handed.path.string()));
  return {};
}

CgroupTree CgroupTree::adopt(Handed handed) {
  CgroupTree tree(std::move(handed.path), std::move(handed.home));
  tree.made_ = handed.made;
  return tree;
}

RunCgroup RunCgroup::adopted(std::filesystem::path path, std::optional<std::chrono::microseconds> cpu_before) {
  // Not openable (out of descriptors): its files read as unreadable, and it
  // is taken for populated until the tree ends.
  int fd = open_cgroup(path);
  RunCgroup cgroup(std::move(path), fd);
  cgroup.cpu_before_ = cpu_before;
  cgroup.limited_ = true;  // its limits unknown: set or reset by the next run that reuses it
  return cgroup;
}

CgroupTree::CgroupTree(CgroupTree&& other) noexcept
    : path_(std::move(other.path_)),
      home_(std::move(other.home_)),
      idle_(std::move(other.idle_)),
      made_(other.made_),
      keeps_peak_(other.keeps_peak_) {
  other.path_.clear();
}

CgroupTree::~CgroupTree() {
  idle_.clear();
  if (!path_.empty()) take_down();
}

void CgroupTree::take_down() const {
  // Back home, which takes a process only with its controllers off again.
  if (!home_.empty()) {
    switch_limit_controllers(path_, '-');
    switch_limit_controllers(home_, '-');
    write_file(home_ / "cgroup.procs", "0");
  }
  end_tree(path_, std::chrono::steady_clock::now() + abandoned_wait);
}

core::Result<RunCgroup> CgroupTree::run_cgroup() {
  if (!idle_.empty()) {
    RunCgroup reused = std::move(idle_.back());
    idle_.pop_back();
    reused.cpu_before_ = reused.cpu_total();
    return reused;
  }
  auto path = path_ / fmt::format("run-{}", ++made_);
  if (::mkdir(path.c_str(), 0755) != 0)
    return core::fail(core::ErrorKind::internal,
                      fmt::format("cannot make the run's cgroup {}: {}", path.string(), std::strerror(errno)));
  int fd = open_cgroup(path);
  if (fd < 0) {
    auto error = core::fail(core::ErrorKind::internal,
                            fmt::format("cannot open the run's cgroup {}: {}", path.string(), std::strerror(errno)));
    ::rmdir(path.c_str());
    return error;
  }
  return RunCgroup(std::move(path), fd);
}

bool CgroupTree::release(RunCgroup& cgroup) {
  if (cgroup.populated()) return false;
  if (!keeps_peak_) keeps_peak_ = std::filesystem::exists(cgroup.path() / "memory.peak");
  if (*keeps_peak_) return cgroup.remove();
  idle_.push_back(std::move(cgroup));
  return true;
}

void CgroupTree::end_abandoned() const {
  auto give_up = std::chrono::steady_clock::now() + abandoned_wait;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(path_.parent_path(), error)) {
    auto owner = tree_owner(entry.path().filename().string());
    if (!owner || entry.path() == path_ || is_running(owner->first, owner->second)) continue;
    end_tree(entry.path(), give_up);
  }
}

core::Result<Containment> parse_containment(std::string_view text) {
  if (text == "auto") return Containment::automatic;
  if (text == "cgroup") return Containment::cgroup;
  if (text == "subreaper") return Containment::subreaper;
  return core::fail(core::ErrorKind::usage,
                    fmt::format("--containment: \"{}\" is not auto, cgroup or subreaper", text));
}

core::Result<ContainmentChoice> choose_containment(Containment containment) {
  if (containment == Containment::subreaper) return ContainmentChoice{std::nullopt, "subreaper (--containment subreaper)"};
  auto tree = CgroupTree::open();
  if (!tree && containment == Containment::cgroup)
    return core::fail(core::ErrorKind::unavailable, fmt::format("--containment cgroup: {}", tree.error().message));
  if (!tree) return ContainmentChoice{std::nullopt, fmt::format("subreaper ({})", tree.error().message)};
  tree->end_abandoned();
  auto description = "cgroup " + tree->path().string();
  return ContainmentChoice{std::move(*tree), std::move(description)};
}

std::string limits_without_cgroup(const core::ResourceLimits& limits, std::string_view why) {
  for (const auto& limit : limit_files) {
    if (auto value = core::limit_of(limits, limit.kind))
      return fmt::format("{} needs a cgroup with the {} controller: {}", core::describe_limit(limit.kind, *value),
                         limit.controller, why);
  }
  return "";
}

std::string limits_unavailable_here(const core::ResourceLimits& limits) {
  if (!limits.any()) return "";
  auto parent = own_cgroup_path();
  if (!parent) return limits_without_cgroup(limits, parent.error().message);
  if (::access(parent->c_str(), W_OK) != 0)
    return limits_without_cgroup(limits, fmt::format("taskd cannot make a cgroup in {}: {}", parent->string(),
                                                     std::strerror(errno)));
  // What reaches taskd's cgroup, which it enables for its tree (CgroupTree::open).
  return missing_controller(limits, *parent, controllers_in(*parent / "cgroup.controllers"));
}

}  // namespace taskd::exec
