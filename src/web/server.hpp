#pragma once
// The HTTP side of `taskd web`: where it listens, and the server that hands
// each request to the Api.
#include <netinet/in.h>
#include <sys/socket.h>

#include <memory>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "web/api.hpp"
#include "web/events.hpp"

namespace taskd::web {

// A numeric address and port, "127.0.0.1:8080" or "[::1]:8080" (port 0:
// any free one).
struct ListenAddress {
  sockaddr_storage address{};
  bool loopback = false;
  std::string text;  // as given
};
// `flag` names the option in messages.
core::Result<ListenAddress> parse_listen_address(std::string_view text, std::string_view flag = "--listen");

// Serves `api` (which must outlive it) on `where`, and the events of `feed`
// at /api/v1/events, from threads of its own until destroyed; once
// listening, prints the URL it serves on stdout ("taskd: serving
// http://127.0.0.1:8080/").
class Server {
 public:
  static core::Result<std::unique_ptr<Server>> start(const Api& api, EventFeed feed, const ListenAddress& where);
  ~Server();

 private:
  struct Parts;
  explicit Server(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

// Serves until SIGINT or SIGTERM.
core::Result<void> serve(const Api& api, EventFeed feed, const ListenAddress& where);

}  // namespace taskd::web
