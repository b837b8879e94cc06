#pragma once
// What `taskd web` answers, apart from HTTP itself: a request's method,
// path, query and Authorization header in, a status, a type and a body out.
// The board's assets, /healthz, /metrics and /api/v1/ (tasks, a task, its
// forecast and explain, runs, a run's output, hosts, and the actions on a
// task) in the JSON shapes of --json.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "sched/clock.hpp"
#include "store/database.hpp"

namespace taskd::web {

struct Request {
  std::string method;
  std::string path;  // percent-decoded
  std::map<std::string, std::string> query;
  std::string authorization;  // the header's value; empty when absent
};

// Writes a body a piece at a time through `write`, as it is made.
using BodyWriter = std::function<core::Result<void>(const std::function<void(std::string_view)>& write)>;

struct Response {
  int status = 200;
  std::string content_type;
  std::string body;
  // Headers a status needs besides those of every response (Allow, WWW-Authenticate).
  std::vector<std::pair<std::string, std::string>> headers;
  // When set, the body is sent as this makes it (and `body` is empty), so
  // that a body of any size is never held whole; an error after the status
  // went out ends the response short.
  BodyWriter stream;
};

// Who may do what: with a token, actions need it (and reads too when
// `for_reads`); without one, the API only reads.
struct Access {
  std::optional<std::string> token;
  bool for_reads = false;
};

// How a request reaches the database: one opened for it alone (read-only
// requests, then actions), as the command line opens it.
struct Databases {
  std::function<core::Result<store::Database>()> to_read;
  std::function<core::Result<store::Database>()> to_change;
};

class Api {
 public:
  Api(Databases databases, Access access, const sched::Clock& clock)
      : databases_(std::move(databases)), access_(std::move(access)), clock_(clock) {}

  // Never throws: an exception of the store is a 500 with its message.
  Response handle(const Request& request) const;
  // Whether the request may read: always, unless reads need the token.
  bool may_read(const Request& request) const;
  // The 401 of a request without the token it needs.
  static Response unauthorized();

 private:
  Response route(const Request& request) const;
  Response read_api(const Request& request, std::string_view path) const;
  Response act(const Request& request, std::string_view path) const;

  Databases databases_;
  Access access_;
  const sched::Clock& clock_;
};

}  // namespace taskd::web
