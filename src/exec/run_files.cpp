#include "exec/run_files.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include <utility>

namespace taskd::exec {
namespace {

std::string temp_root() {
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir && *tmpdir ? tmpdir : "/tmp";
}

bool write_file(const std::string& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  return static_cast<bool>(out);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

}  // namespace

core::Result<RunDirectory> RunDirectory::create() {
  std::string pattern = temp_root() + "/taskd-run-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    return core::fail(core::ErrorKind::internal,
                      fmt::format("cannot create a run directory in {}: {}", temp_root(), std::strerror(errno)));
  return RunDirectory(pattern);
}

RunDirectory::RunDirectory(RunDirectory&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }

RunDirectory::~RunDirectory() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

core::Result<RunFiles> RunDirectory::files_for(std::int64_t run_id, std::string_view state) {
  if (::access(path_.c_str(), F_OK) != 0) {
    // Never made again under the same name: someone else may own that name by now.
    auto fresh = create();
    if (!fresh) return std::unexpected(fresh.error());
    path_ = std::exchange(fresh->path_, {});
  }
  RunFiles files(fmt::format("{}/{}.state", path_, run_id), fmt::format("{}/{}.status", path_, run_id));
  // $TASKD_STATUS is left for the run to create: one file fewer to make per
  // run (inode allocation on ext4 was a sixth of taskd's time per run).
  if (!write_file(files.state_path(), state))
    return core::fail(core::ErrorKind::internal, fmt::format("cannot write the run files in {}", path_));
  return files;
}

RunFiles::RunFiles(RunFiles&& other) noexcept
    : state_path_(std::move(other.state_path_)), status_path_(std::move(other.status_path_)) {
  other.state_path_.clear();
  other.status_path_.clear();
}

RunFiles::~RunFiles() {
  if (state_path_.empty()) return;
  ::unlink(state_path_.c_str());
  ::unlink(status_path_.c_str());
}

core::Result<std::string> RunFiles::read_state(std::size_t limit) const {
  std::error_code error;
  auto size = std::filesystem::file_size(state_path(), error);
  if (error) return std::string();  // the run removed it: no state
  if (size > limit)
    return core::fail(core::ErrorKind::bad_input,
                      fmt::format("$TASKD_STATE is {} bytes, over the limit of {} bytes; the previous state is kept",
                                  size, limit));
  return read_file(state_path());
}

std::string RunFiles::last_status_line() const { return last_line(read_file(status_path())); }

std::string last_line(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  auto start = text.find_last_of('\n');
  std::string_view line = start == std::string_view::npos ? text : text.substr(start + 1);
  if (line.size() > 500) line = line.substr(0, 500);
  return std::string(line);
}

}  // namespace taskd::exec
