#include "exec/run_files.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

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

core::Result<RunFiles> RunFiles::create(std::string_view state) {
  std::string pattern = temp_root() + "/taskd-run-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    return core::fail(core::ErrorKind::internal,
                      fmt::format("cannot create a run directory in {}: {}", temp_root(), std::strerror(errno)));
  RunFiles files(pattern);
  if (!write_file(files.state_path(), state) || !write_file(files.status_path(), ""))
    return core::fail(core::ErrorKind::internal, fmt::format("cannot write the run files in {}", pattern));
  return files;
}

RunFiles::RunFiles(RunFiles&& other) noexcept : dir_(std::move(other.dir_)) { other.dir_.clear(); }

RunFiles::~RunFiles() {
  if (dir_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
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
