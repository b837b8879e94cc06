#include "exec/reexec.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <unistd.h>

#include "exec/handover.hpp"

namespace taskd::exec {

Image this_image(std::vector<std::string> argv) {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error).native();
  constexpr std::string_view deleted = " (deleted)";
  if (path.ends_with(deleted)) path.resize(path.size() - deleted.size());
  if (error && !argv.empty()) path = argv.front();
  return {std::move(path), std::move(argv)};
}

core::Error execute_again(const Image& image, int record, std::span<const int> kept) {
  std::vector<char*> args;
  for (const auto& word : image.argv) args.push_back(const_cast<char*>(word.c_str()));
  args.push_back(nullptr);
  std::string variable(handover_variable);
  ::setenv(variable.c_str(), std::to_string(record).c_str(), 1);
  keep_across_exec(kept, true);
  keep_across_exec({&record, 1}, true);
  ::execv(image.path.c_str(), args.data());
  int why = errno;
  keep_across_exec(kept, false);
  ::close(record);
  ::unsetenv(variable.c_str());
  return {core::ErrorKind::unavailable, fmt::format("cannot execute {}: {}", image.path, std::strerror(why))};
}

}  // namespace taskd::exec
