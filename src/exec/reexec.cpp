#include "exec/reexec.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <unistd.h>

namespace taskd::exec {

Image this_image(std::vector<std::string> argv) {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error).native();
  constexpr std::string_view deleted = " (deleted)";
  if (path.ends_with(deleted)) path.resize(path.size() - deleted.size());
  if (error && !argv.empty()) path = argv.front();
  return {std::move(path), std::move(argv)};
}

core::Error execute_again(const Image& image) {
  std::vector<char*> args;
  for (const auto& word : image.argv) args.push_back(const_cast<char*>(word.c_str()));
  args.push_back(nullptr);
  ::execv(image.path.c_str(), args.data());
  return {core::ErrorKind::unavailable, fmt::format("cannot execute {}: {}", image.path, std::strerror(errno))};
}

}  // namespace taskd::exec
