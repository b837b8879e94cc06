#pragma once
// Where the database is, as --db or TASKD_DB names it: a SQLite file, or a
// PostgreSQL server in a connection string libpq reads (a URI, postgresql://
// or postgres://, or keyword=value pairs); and which parts of that string are
// secrets, to be hidden wherever taskd shows it.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace taskd::store {

// Whether `location` names a PostgreSQL server, or is meant to: it begins
// with a URI scheme, postgresql:// or postgres:// in any case, or with a
// keyword and "=" (host=db1 ...). Anything else is a SQLite file's path.
bool is_server_uri(std::string_view location);

// A part of a string: its first byte and its length.
struct Span {
  std::size_t offset = 0;
  std::size_t size = 0;
};

// The secrets in a server's `location`, in order: the values libpq reads as
// the password and sslpassword, in each spelling libpq accepts (a URI's
// user:PASSWORD@, its query's password=, the key percent-encoded or not;
// keyword=value pairs, quoted or not), the key in any case. Where their
// bounds are unclear, the rest of the string: a URI with an '@' beyond its
// user name and password (a password with an unencoded '/' or '@'), pairs
// libpq cannot read. None for a file.
std::vector<Span> secret_spans(std::string_view location);

// `location` as taskd shows it: each secret replaced by "****".
std::string without_password(std::string_view location);

// Refuses (a usage error naming `location` without its secrets) a server's
// location that libpq would not read, or would read otherwise than it seems
// to say: a scheme not in lower case (libpq then takes the string for a
// database's name), a URI with an '@' beyond its user name and password,
// anything PQconninfoParse refuses.
core::Result<void> check_server_location(const std::string& location);

}  // namespace taskd::store
