#pragma once
// The secret that lets a client of `taskd web` act (and, with
// --token-for-reads, read): read once from a file only its owner can read,
// compared in constant time.
#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace taskd::web {

// The token in `path`: its first line, without the line break. Bad input
// when the file is not a regular file of this user (or root), when its
// group or others may read or write it (checked on the opened file, so a
// swap after the check changes nothing), or when the token is empty.
core::Result<std::string> read_token(const std::filesystem::path& path);

// Whether `given` is `token`, taking as long whatever the first difference.
bool same_token(std::string_view given, std::string_view token);

// The token of an Authorization header ("Bearer TOKEN"); empty for any other.
std::string_view bearer_token(std::string_view authorization);

}  // namespace taskd::web
