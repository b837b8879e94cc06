#pragma once
// Whether another local user could change a file taskd acts on, or what its
// path leads to: the database file, the directory of this host's files, the
// event log. Trusted is owned by this user or root; on the way to it, every
// directory owned so too and writable by nobody else unless sticky (/tmp),
// and no symbolic link another user owns, as OpenSSH's safe_path and the
// kernel's protected_symlinks judge them. A path so checked names the same
// file until this user or root changes it.
#include <sys/stat.h>

#include <filesystem>

#include "core/error.hpp"

namespace taskd::store {

// Refuses `info` (of `path`, a link's own when it is one) when neither this
// user nor root owns it.
core::Result<void> check_owner(const std::filesystem::path& path, const struct stat& info);

// The regular file at `path` and the directory that holds it, trusted and
// writable by nobody else (sticky or not), judged on the descriptors opened;
// returns the file's fstat.
core::Result<struct stat> check_private_file(const std::filesystem::path& path);

// The directory at `path`, trusted and writable by nobody else.
core::Result<void> check_private_directory(const std::filesystem::path& path);

}  // namespace taskd::store
