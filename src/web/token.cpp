#include "web/token.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace taskd::web {
namespace {

using core::ErrorKind;
using core::fail;

// A token file's size limit: a token is a line, not a document.
constexpr std::size_t max_token_file = 4096;

core::Result<void> check_private(int fd, const std::filesystem::path& path) {
  struct stat info {};
  if (::fstat(fd, &info) != 0)
    return fail(ErrorKind::bad_input, fmt::format("--token-file {}: {}", path.string(), std::strerror(errno)));
  if (!S_ISREG(info.st_mode))
    return fail(ErrorKind::bad_input, fmt::format("--token-file {}: not a regular file", path.string()));
  if (info.st_uid != ::geteuid() && info.st_uid != 0)
    return fail(ErrorKind::bad_input,
                fmt::format("--token-file {}: owned by user {}, not by this user or root", path.string(), info.st_uid));
  if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0)
    return fail(ErrorKind::bad_input,
                fmt::format("--token-file {}: its group or others may read or write it (mode {:o}); chmod 600 it",
                            path.string(), info.st_mode & 07777));
  return {};
}

core::Result<std::string> read_all(int fd, const std::filesystem::path& path) {
  std::string text(max_token_file + 1, '\0');
  std::size_t size = 0;
  while (size < text.size()) {
    auto got = ::read(fd, text.data() + size, text.size() - size);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      return fail(ErrorKind::bad_input, fmt::format("--token-file {}: {}", path.string(), std::strerror(errno)));
    if (got == 0) break;
    size += static_cast<std::size_t>(got);
  }
  if (size > max_token_file)
    return fail(ErrorKind::bad_input, fmt::format("--token-file {}: longer than {} bytes", path.string(), max_token_file));
  text.resize(size);
  return text;
}

}  // namespace

core::Result<std::string> read_token(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return fail(ErrorKind::bad_input, fmt::format("--token-file {}: {}", path.string(), std::strerror(errno)));
  auto checked = check_private(fd, path);
  auto text = checked ? read_all(fd, path) : std::unexpected(checked.error());
  ::close(fd);
  if (!text) return text;
  auto token = text->substr(0, text->find_first_of("\r\n"));
  if (token.empty()) return fail(ErrorKind::bad_input, fmt::format("--token-file {}: its first line is empty", path.string()));
  return token;
}

bool same_token(std::string_view given, std::string_view token) {
  // Every byte of `token` is compared, whatever `given`'s length.
  unsigned char difference = given.size() == token.size() ? 0 : 1;
  for (std::size_t i = 0; i < token.size(); ++i) {
    auto other = i < given.size() ? given[i] : '\0';
    difference |= static_cast<unsigned char>(other ^ token[i]);
  }
  return difference == 0;
}

std::string_view bearer_token(std::string_view authorization) {
  constexpr std::string_view scheme = "Bearer ";
  if (!authorization.starts_with(scheme)) return {};
  return authorization.substr(scheme.size());
}

}  // namespace taskd::web
