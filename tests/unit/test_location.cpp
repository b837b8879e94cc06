#include <doctest/doctest.h>
#include <libpq-fe.h>

#include <map>
#include <optional>
#include <string>

#include "store/location.hpp"

using taskd::store::check_server_location;
using taskd::store::is_server_uri;
using taskd::store::without_password;

namespace {

constexpr const char* secret = "s3cret";

// The options libpq reads from `conninfo` (PQconninfoParse), none if it refuses it.
std::optional<std::map<std::string, std::string>> libpq_options(const std::string& conninfo) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
  PQfreemem(error);
  if (!options) return std::nullopt;
  std::map<std::string, std::string> values;
  for (auto* option = options; option->keyword; ++option)
    if (option->val) values[option->keyword] = option->val;
  PQconninfoFree(options);
  return values;
}

// Checks that `location` is shown as `shown`, and, if taskd takes it (libpq
// reads it as it seems to be written), that what is hidden is exactly its
// password and sslpassword: libpq reads the same options from both strings,
// but those two, which it reads as "****" where they are not empty.
void check_shown(const std::string& location, const std::string& shown) {
  CAPTURE(location);
  CHECK(without_password(location) == shown);
  CHECK(shown.find(secret) == std::string::npos);
  if (!check_server_location(location)) return;
  auto original = libpq_options(location);
  auto masked = libpq_options(shown);
  REQUIRE(original);
  REQUIRE(masked);
  for (const char* key : {"password", "sslpassword"}) {
    if (original->contains(key)) CHECK((*masked)[key] == ((*original)[key].empty() ? "" : "****"));
    original->erase(key);
    masked->erase(key);
  }
  CHECK(*original == *masked);
}

// The message check_server_location refuses `location` with.
std::string refusal_of(const std::string& location) {
  auto checked = check_server_location(location);
  REQUIRE_FALSE(checked);
  CHECK(checked.error().kind == taskd::core::ErrorKind::usage);
  CHECK(checked.error().message.find(secret) == std::string::npos);
  return checked.error().message;
}

}  // namespace

TEST_CASE("every spelling of a server libpq reads is a server, and the rest are files") {
  for (const char* server : {"postgresql://db1/taskd", "postgres://db1", "postgresql:///taskd?host=/run/postgresql",
                             "host=db1 dbname=taskd", "  host = db1", "password=x", "service=taskd"}) {
    CAPTURE(server);
    CHECK(is_server_uri(server));
  }
  // Spellings libpq refuses, or reads otherwise, are not files either:
  // taskd refuses them (check_server_location).
  for (const char* meant : {"POSTGRESQL://db1/taskd", "Postgres://db1", "PASSWORD=x host=db1", "a=b.db"}) {
    CAPTURE(meant);
    CHECK(is_server_uri(meant));
  }
  for (const char* file : {"taskd.db", "/srv/a=b/taskd.db", "./host=db1", "postgresql:/taskd", "postgresql.db",
                           "/home/u/pass:word@db1/taskd.db", ""}) {
    CAPTURE(file);
    CHECK_FALSE(is_server_uri(file));
    CHECK(without_password(file) == file);
  }
}

TEST_CASE("a URI's password is hidden where libpq reads it") {
  check_shown("postgresql://taskd:s3cret@db1:5432/taskd", "postgresql://taskd:****@db1:5432/taskd");
  check_shown("postgresql://taskd:s3?cret@db1/taskd", "postgresql://taskd:****@db1/taskd");
  check_shown("postgresql://taskd:s3%2Fcret@db1/taskd", "postgresql://taskd:****@db1/taskd");
  check_shown("postgresql://taskd:s3cret@[::1]:5432,db2/taskd?connect_timeout=5",
              "postgresql://taskd:****@[::1]:5432,db2/taskd?connect_timeout=5");
  check_shown("postgres://db1/taskd?user=taskd&password=s3cret&sslmode=require",
              "postgres://db1/taskd?user=taskd&password=****&sslmode=require");
  check_shown("postgresql://taskd@db1/taskd?user=me@corp&password=s3cret",
              "postgresql://taskd@db1/taskd?user=me@corp&password=****");
  check_shown("postgresql://taskd:@db1/taskd", "postgresql://taskd:@db1/taskd");
}

TEST_CASE("a URI's sslpassword, a percent-encoded key and a key in capitals are hidden") {
  check_shown("postgresql://db1/taskd?sslpassword=s3cret", "postgresql://db1/taskd?sslpassword=****");
  check_shown("postgresql://db1/taskd?%70assword=s3cret", "postgresql://db1/taskd?%70assword=****");
  check_shown("postgresql://db1/taskd?%73slpassword=s3cret&sslmode=require",
              "postgresql://db1/taskd?%73slpassword=****&sslmode=require");
  check_shown("postgresql://db1/taskd?PASSWORD=s3cret", "postgresql://db1/taskd?PASSWORD=****");
  check_shown("postgresql://db1/taskd?SslPassword=s3cret", "postgresql://db1/taskd?SslPassword=****");
}

TEST_CASE("a URI whose password holds an unencoded '/' or '@' is hidden past its scheme") {
  // libpq reads "taskd:s3" as a host and a port, "cret@db1/taskd" as the database
  check_shown("postgresql://taskd:s3/cret@db1/taskd", "postgresql://****");
  // libpq reads the password "s3", the host "cret@db1"
  check_shown("postgresql://taskd:s3@cret@db1/taskd", "postgresql://****");
  check_shown("postgresql://taskd:s3/cr?et@db1/taskd", "postgresql://****");
}

TEST_CASE("a URI with its scheme in capitals is hidden as one in lower case") {
  check_shown("POSTGRESQL://taskd:s3cret@db1/taskd", "POSTGRESQL://taskd:****@db1/taskd");
  check_shown("Postgres://db1/taskd?password=s3cret", "Postgres://db1/taskd?password=****");
}

TEST_CASE("keyword=value pairs: the password and sslpassword, quoted or not, in any case") {
  check_shown("host=db1 password=s3cret dbname=taskd", "host=db1 password=**** dbname=taskd");
  check_shown("host=db1 password = s3cret", "host=db1 password = ****");
  check_shown("password='s3cret and more' host=db1", "password='****' host=db1");
  check_shown("password='s3cret \\'quoted\\''host=db1", "password='****'host=db1");
  check_shown("password=s3cret\\ and\\ more host=db1", "password=**** host=db1");
  check_shown("host=db1\tsslpassword=s3cret", "host=db1\tsslpassword=****");
  check_shown("host=db1 PASSWORD=s3cret", "host=db1 PASSWORD=****");
  check_shown("host=db1 password= dbname=s3cret", "host=db1 password= ****");  // libpq skips the spaces
  check_shown("host='db 1' password=''", "host='db 1' password=''");
}

TEST_CASE("keyword=value pairs libpq cannot read are hidden from where it stops") {
  check_shown("host=db1 password='s3cret", "host=db1 password='****");
  check_shown("host=db1 password s3cret", "host=db1 ****");
}

TEST_CASE("a server libpq reads as it seems to be written is accepted") {
  for (const char* location : {"postgresql://taskd:s3cret@db1/taskd", "postgres://db1/taskd?password=s3cret",
                               "host=db1 password='s3 cret'", "postgresql:///taskd?host=/run/postgresql"}) {
    CAPTURE(location);
    CHECK(check_server_location(location));
  }
}

TEST_CASE("a server libpq would not read, or would read otherwise, is refused without its secrets") {
  CHECK(refusal_of("POSTGRESQL://taskd:s3cret@db1/taskd").find("lower case") != std::string::npos);
  CHECK(refusal_of("postgresql://taskd:s3/cret@db1/taskd").find("percent-encoded") != std::string::npos);
  CHECK(refusal_of("postgresql://taskd:s3@cret@db1/taskd").find("postgresql://****") != std::string::npos);
  CHECK(refusal_of("postgresql://db1/taskd?PASSWORD=s3cret").find("\"PASSWORD\"") != std::string::npos);
  CHECK(refusal_of("host=db1 PASSWORD=s3cret").find("host=db1 PASSWORD=****") != std::string::npos);
  CHECK(refusal_of("a=b.db").find("invalid connection option \"a\"") != std::string::npos);
  // libpq quotes the part it cannot decode, or the whole URI
  CHECK(refusal_of("postgresql://taskd:s3cret%zz@db1/taskd").find("percent-encoded token: \"****\"") !=
        std::string::npos);
  CHECK(refusal_of("postgresql://db1/taskd?password=s3cret%zz").find("\"****\"") != std::string::npos);
  CHECK(refusal_of("postgresql://taskd:s3cret@[::1/taskd").find("postgresql://taskd:****@[::1/taskd") !=
        std::string::npos);
}
