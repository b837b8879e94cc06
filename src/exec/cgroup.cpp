#include "exec/cgroup.hpp"

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
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

// The number after `key ` in a flat-keyed file ("usage_usec 1234\n...").
std::optional<std::uint64_t> keyed_value(const std::string& text, std::string_view key) {
  std::istringstream lines(text);
  std::string name;
  std::uint64_t value = 0;
  while (lines >> name >> value) {
    if (name == key) return value;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> single_value(const fs::path& path) {
  std::string text = read_file(path);
  std::uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  return value;
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
    : path_(std::move(other.path_)), procs_fd_(std::exchange(other.procs_fd_, -1)), cpu_before_(other.cpu_before_) {}

RunCgroup& RunCgroup::operator=(RunCgroup&& other) noexcept {
  if (this != &other) {
    if (procs_fd_ >= 0) ::close(procs_fd_);
    path_ = std::move(other.path_);
    procs_fd_ = std::exchange(other.procs_fd_, -1);
    cpu_before_ = other.cpu_before_;
  }
  return *this;
}

RunCgroup::~RunCgroup() {
  if (procs_fd_ >= 0) ::close(procs_fd_);
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
  std::ifstream events(path_ / "cgroup.events");
  // Unreadable (out of descriptors, say): taken for populated, never reused
  // with a process in it; gone: empty.
  if (!events) return errno != ENOENT;
  std::stringstream contents;
  contents << events.rdbuf();
  return keyed_value(contents.str(), "populated") != 0;
}

std::optional<std::chrono::microseconds> RunCgroup::cpu_total() const {
  auto cpu = keyed_value(read_file(path_ / "cpu.stat"), "usage_usec");
  if (!cpu) return std::nullopt;
  return std::chrono::microseconds(static_cast<std::int64_t>(*cpu));
}

core::ResourceUsage RunCgroup::usage() const {
  core::ResourceUsage usage;
  auto cpu = cpu_total();
  if (cpu && cpu_before_) usage.cpu = *cpu - *cpu_before_;
  if (auto peak = single_value(path_ / "memory.peak")) usage.peak_memory_bytes = static_cast<std::int64_t>(*peak);
  return usage;
}

bool RunCgroup::remove() {
  if (!remove_cgroup(path_)) return false;
  if (procs_fd_ >= 0) ::close(procs_fd_);
  procs_fd_ = -1;
  return true;
}

core::Result<CgroupTree> CgroupTree::open() {
  auto mount = cgroup2_mount();
  if (mount.empty()) return core::fail(core::ErrorKind::unavailable, "no cgroup2 hierarchy is mounted");
  auto own = own_cgroup();
  if (!own) return core::fail(core::ErrorKind::unavailable, "this process is in no cgroup of the v2 hierarchy");
  // The start time tells this process's tree from that of a dead one with its
  // pid, which the next taskd ends.
  auto start = process_start_ticks(::getpid());
  if (start <= 0) return core::fail(core::ErrorKind::unavailable, "this process's start time cannot be read");
  auto path = mount / fs::path(*own).relative_path() / tree_name(::getpid(), start);
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
    return core::fail(core::ErrorKind::unavailable,
                      fmt::format("cannot make a cgroup in {}: {}", path.parent_path().string(), std::strerror(errno)));
  // Peak memory per run, where the memory controller reaches this tree: its
  // runs' cgroups then have memory.peak. Nothing to lose where it does not.
  write_file(path / "cgroup.subtree_control", "+memory");
  return CgroupTree(std::move(path));
}

CgroupTree::CgroupTree(CgroupTree&& other) noexcept
    : path_(std::move(other.path_)), idle_(std::move(other.idle_)), made_(other.made_), keeps_peak_(other.keeps_peak_) {
  other.path_.clear();
}

CgroupTree::~CgroupTree() {
  idle_.clear();
  if (!path_.empty()) end_tree(path_, std::chrono::steady_clock::now() + abandoned_wait);
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
  int fd = ::open((path / "cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    auto error = core::fail(core::ErrorKind::internal,
                            fmt::format("cannot open {}/cgroup.procs: {}", path.string(), std::strerror(errno)));
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

}  // namespace taskd::exec
