// The HTTP server of `taskd web`, on GNU libmicrohttpd (Debian's
// libmicrohttpd-dev). Why that library over cpp-httplib and civetweb:
// - its limits are the ones a board on an open port needs, each one option:
//   connections at once (MHD_OPTION_CONNECTION_LIMIT; the kernel queue
//   holds the rest), a connection idle too long is closed
//   (MHD_OPTION_CONNECTION_TIMEOUT), and a request line with its headers
//   must fit in a fixed buffer per connection (MHD_OPTION_CONNECTION_MEMORY_LIMIT,
//   else 431), so a client cannot make it hold more memory or threads;
// - one epoll thread per worker of a small fixed pool serves every
//   connection: 1 000 idle connections cost file descriptors, not threads,
//   where cpp-httplib gives each connection a thread of its pool for as
//   long as it stays open;
// - it is a C library with a stable ABI, fuzzed (OSS-Fuzz) and used by
//   systemd-journal-gatewayd, a model of a small HTTP API over a local store;
//   civetweb is larger (CGI, Lua, a file server) for what taskd does not use.
// TLS it would do too (GnuTLS), but taskd leaves that to a reverse proxy.
#include "web/server.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <malloc.h>
#include <microhttpd.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

#include "web/events.hpp"

namespace taskd::web {
namespace {

using core::ErrorKind;
using core::fail;

// Connections at once: enough that 1 000 idle ones leave room for other
// clients, within the files the process may open less those it keeps for
// the rest of its work (the database's, and under taskd run --web its runs'
// pipes and logs).
constexpr unsigned most_connections = 2048;
constexpr rlim_t files_kept = 256;
constexpr unsigned fewest_connections = 64;
// Per client address, on an address others can reach: one client cannot take every connection.
constexpr unsigned per_address_limit = 32;
constexpr unsigned idle_seconds = 10;
constexpr std::size_t connection_memory = 16 * 1024;  // request line and headers
constexpr std::size_t body_limit = 4096;              // POST bodies are not read, only bounded
constexpr unsigned worker_threads = 4;
// Event streams: at most this many at once, each ended after its time
// (EventSource connects again by itself), with a comment line when nothing
// else was sent for a while, so that a client gone is seen.
constexpr std::size_t most_streams = 32;
constexpr auto stream_time = std::chrono::minutes(10);
constexpr auto stream_keepalive = std::chrono::seconds(5);
constexpr auto feed_wait = std::chrono::milliseconds(500);
// A stream whose client falls this many bytes behind is ended (EventSource
// connects again), so that a slow client makes the server hold no more.
constexpr std::size_t most_pending = 1 << 20;
constexpr std::string_view events_path = "/api/v1/events";
// Bodies made while they are sent (/metrics): each by a thread of its own
// with the database open, at most this many at once; a block at a time.
constexpr std::size_t most_made_bodies = worker_threads;
constexpr std::size_t body_block = 64 * 1024;

// Every response says: no script but the board's own file, no framing,
// no sniffing, no referrer.
constexpr std::pair<const char*, const char*> common_headers[] = {
    {"Content-Security-Policy",
     "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
     "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
    {"X-Content-Type-Options", "nosniff"},
    {"Referrer-Policy", "no-referrer"},
    {"X-Frame-Options", "DENY"},
    {"Cache-Control", "no-store"},
};

core::Result<std::uint16_t> parse_port(std::string_view text, std::string_view given, std::string_view flag) {
  unsigned port = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || port > 65535)
    return fail(ErrorKind::usage, fmt::format("{} \"{}\": the port is a number from 0 to 65535", flag, given));
  return static_cast<std::uint16_t>(port);
}

MHD_Result add_query_value(void* cls, MHD_ValueKind, const char* key, const char* value) {
  static_cast<Request*>(cls)->query[key] = value ? value : "";
  return MHD_YES;
}

}  // namespace

// Parts of Server (so not in an unnamed namespace), of this file alone.
namespace serving {

// The open event streams and the thread that feeds them. The feed watches
// the database even while no stream is open, so that a stream opened sees
// what comes next at once. A stream's connection is suspended while it has
// nothing to send, so it holds no thread of the server; the feed resumes it
// when it has.
class Streams {
 public:
  struct Stream {
    Streams* streams;
    MHD_Connection* connection;
    std::string pending;
    bool watched = false;  // the feed watched the database since the stream opened
    bool suspended = false;
    bool ended = false;
    std::chrono::steady_clock::time_point deadline;
    std::chrono::steady_clock::time_point last_sent;
  };

  explicit Streams(EventFeed feed) : feed_(std::move(feed)), thread_([this] { run(); }) {}
  ~Streams() { stop(); }

  // A new stream of `connection`; none while most_streams are open.
  Stream* open(MHD_Connection* connection) {
    std::lock_guard lock(mutex_);
    if (streams_.size() >= most_streams || stopping_) return nullptr;
    auto now = std::chrono::steady_clock::now();
    return &streams_.emplace_back(Stream{this, connection, "", false, false, false, now + stream_time, now});
  }

  // libmicrohttpd's content reader: what the stream has, or its end, or
  // (nothing yet) the connection suspended until the feed has more.
  static ssize_t read(void* cls, std::uint64_t, char* buffer, std::size_t most) {
    auto& stream = *static_cast<Stream*>(cls);
    std::lock_guard lock(stream.streams->mutex_);
    if (!stream.pending.empty()) {
      auto size = std::min(most, stream.pending.size());
      std::memcpy(buffer, stream.pending.data(), size);
      stream.pending.erase(0, size);
      return static_cast<ssize_t>(size);
    }
    if (stream.ended) return MHD_CONTENT_READER_END_OF_STREAM;
    stream.suspended = true;
    MHD_suspend_connection(stream.connection);
    return 0;
  }

  // libmicrohttpd's end of the response: the stream is forgotten.
  static void close(void* cls) {
    auto* stream = static_cast<Stream*>(cls);
    auto& streams = *stream->streams;
    std::lock_guard lock(streams.mutex_);
    streams.streams_.remove_if([&](const Stream& open) { return &open == stream; });
  }

  // Ends every stream and the feed: before the server stops, which must
  // not find a connection suspended.
  void stop() {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
    }
    thread_.join();
    std::lock_guard lock(mutex_);
    for (auto& stream : streams_) {
      stream.ended = true;
      resume(stream);
    }
  }

 private:
  void resume(Stream& stream) {
    if (!stream.suspended) return;
    stream.suspended = false;
    MHD_resume_connection(stream.connection);
  }

  void run() {
    while (true) {
      {
        std::lock_guard lock(mutex_);
        if (stopping_) return;
      }
      auto events = feed_.next(std::chrono::duration_cast<std::chrono::milliseconds>(feed_wait));
      auto now = std::chrono::steady_clock::now();
      std::lock_guard lock(mutex_);
      for (auto& stream : streams_) {
        // Its first line says the stream is watched: what happens after it is told.
        if (!stream.watched && feed_.watching()) {
          stream.watched = true;
          stream.pending = "retry: 3000\n\n";
        }
        if (stream.watched) stream.pending += events;
        if (stream.pending.empty() && now - stream.last_sent >= stream_keepalive) stream.pending = ":\n\n";
        if (!stream.pending.empty()) stream.last_sent = now;
        if (now >= stream.deadline || stream.pending.size() > most_pending) stream.ended = true;
        if (stream.pending.size() > most_pending) stream.pending.clear();
        if (!stream.pending.empty() || stream.ended) resume(stream);
      }
    }
  }

  EventFeed feed_;
  std::mutex mutex_;
  std::list<Stream> streams_;
  bool stopping_ = false;
  std::thread thread_;
};

// A body that a thread of its own makes while libmicrohttpd sends it: the
// thread hands over one piece at a time and waits until it was sent, so a
// body of any size costs the server a piece of it. The client gone, the
// thread is stopped at its next piece.
class MadeBody {
 public:
  // A new body that `write` makes; none while most_made_bodies are made.
  static MadeBody* start(std::atomic<std::size_t>& count, BodyWriter write) {
    if (count.fetch_add(1) >= most_made_bodies) {
      count.fetch_sub(1);
      return nullptr;
    }
    return new MadeBody(count, std::move(write));
  }

  // libmicrohttpd's content reader: the piece made, once there is one, or the
  // end (short, with an error, when making it failed).
  static ssize_t read(void* cls, std::uint64_t, char* buffer, std::size_t most) {
    auto& body = *static_cast<MadeBody*>(cls);
    std::unique_lock lock(body.mutex_);
    body.changed_.wait(lock, [&] { return !body.piece_.empty() || body.made_; });
    if (body.piece_.empty()) return body.failed_ ? MHD_CONTENT_READER_END_WITH_ERROR : MHD_CONTENT_READER_END_OF_STREAM;
    auto size = std::min(most, body.piece_.size());
    std::memcpy(buffer, body.piece_.data(), size);
    body.piece_.erase(0, size);
    if (body.piece_.empty()) body.changed_.notify_all();
    return static_cast<ssize_t>(size);
  }

  // libmicrohttpd's end of the response.
  static void close(void* cls) { delete static_cast<MadeBody*>(cls); }

 private:
  // Thrown out of the writer when the client is gone, to stop it.
  struct Abandoned {};

  MadeBody(std::atomic<std::size_t>& count, BodyWriter write)
      : count_(count), thread_([this, write = std::move(write)] { make(write); }) {}

  ~MadeBody() {
    {
      std::lock_guard lock(mutex_);
      abandoned_ = true;
    }
    changed_.notify_all();
    thread_.join();
    count_.fetch_sub(1);
  }

  void make(const BodyWriter& write) {
    bool written = false;
    try {
      written = write([this](std::string_view piece) { hand_over(piece); }).has_value();
    } catch (...) {  // Abandoned, or a failure of the store: the body ends short
    }
    std::lock_guard lock(mutex_);
    made_ = true;
    failed_ = !written;
    changed_.notify_all();
  }

  void hand_over(std::string_view piece) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return piece_.empty() || abandoned_; });
    if (abandoned_) throw Abandoned{};
    piece_.assign(piece);
    changed_.notify_all();
  }

  std::atomic<std::size_t>& count_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string piece_;  // made, not yet sent
  bool made_ = false;
  bool failed_ = false;
  bool abandoned_ = false;
  std::thread thread_;  // last: it starts at once, with every other member ready
};

// What the server's handler reaches.
struct Handlers {
  const Api& api;
  Streams& streams;
  std::atomic<std::size_t> made_bodies{0};
};

}  // namespace serving

using serving::Handlers;
using serving::MadeBody;
using serving::Streams;

namespace {

// What a connection carries between the calls for one request.
struct Pending {
  std::size_t body_bytes = 0;
};

// Queues `response` with the status, type and headers of `answer`, and the headers of every response.
MHD_Result queue(MHD_Connection* connection, const Response& answer, MHD_Response* response) {
  MHD_add_response_header(response, "Content-Type", answer.content_type.c_str());
  for (const auto& [name, value] : common_headers) MHD_add_response_header(response, name, value);
  for (const auto& [name, value] : answer.headers) MHD_add_response_header(response, name.c_str(), value.c_str());
  auto queued = MHD_queue_response(connection, static_cast<unsigned>(answer.status), response);
  MHD_destroy_response(response);
  return queued;
}

// The body goes to libmicrohttpd as it is, not copied: a page of 5 000 tasks is megabytes.
MHD_Result send(MHD_Connection* connection, Response answer) {
  auto* body = new std::string(std::move(answer.body));
  auto* response = MHD_create_response_from_buffer_with_free_callback_cls(
      body->size(), body->data(), [](void* cls) { delete static_cast<std::string*>(cls); }, body);
  if (!response) {
    delete body;
    return MHD_NO;
  }
  return queue(connection, answer, response);
}

// A 503 of a server that serves as many as it will of something: `why` says what.
Response busy(const std::string& why) {
  return {.status = 503,
          .content_type = "application/json",
          .body = fmt::format("{{\"error\":\"{}: ask again later\"}}\n", why)};
}

MHD_Result send_made(MHD_Connection* connection, Handlers& server, const Response& answer) {
  auto* body = MadeBody::start(server.made_bodies, answer.stream);
  if (!body) return send(connection, busy(fmt::format("{} responses are being written already", most_made_bodies)));
  auto* response = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, body_block, MadeBody::read, body, MadeBody::close);
  if (!response) {
    MadeBody::close(body);
    return MHD_NO;
  }
  return queue(connection, answer, response);
}

MHD_Result send_events(MHD_Connection* connection, Handlers& server, const Request& request) {
  if (request.method != "GET") {
    Response refused{
        .status = 405, .content_type = "application/json", .body = "{\"error\":\"this path answers GET only\"}\n"};
    refused.headers.emplace_back("Allow", "GET");
    return send(connection, std::move(refused));
  }
  if (!server.api.may_read(request)) return send(connection, Api::unauthorized());
  auto* stream = server.streams.open(connection);
  if (!stream) return send(connection, busy(fmt::format("{} event streams are open already", most_streams)));
  auto* response = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, Streams::read, stream, Streams::close);
  if (!response) {
    Streams::close(stream);
    return MHD_NO;
  }
  return queue(connection, {.status = MHD_HTTP_OK, .content_type = "text/event-stream; charset=utf-8"}, response);
}

Request request_of(MHD_Connection* connection, const char* url, const char* method) {
  Request request{.method = method, .path = url};
  MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, add_query_value, &request);
  const char* authorization = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
  request.authorization = authorization ? authorization : "";
  return request;
}

// libmicrohttpd's handler: called once with the headers, then for each
// piece of the body, then once more to answer.
MHD_Result answer(void* cls, MHD_Connection* connection, const char* url, const char* method, const char*, const char*,
                  std::size_t* upload_size, void** state) {
  if (!*state) {
    *state = new Pending;
    return MHD_YES;
  }
  auto* pending = static_cast<Pending*>(*state);
  if (*upload_size > 0) {
    pending->body_bytes += *upload_size;
    *upload_size = 0;
    return MHD_YES;
  }
  if (pending->body_bytes > body_limit)
    return send(connection, {.status = 413,
                             .content_type = "application/json",
                             .body = fmt::format("{{\"error\":\"a body of at most {} bytes\"}}\n", body_limit)});
  auto& server = *static_cast<Handlers*>(cls);
  auto request = request_of(connection, url, method);
  if (request.path == events_path) return send_events(connection, server, request);
  auto response = server.api.handle(request);
  return response.stream ? send_made(connection, server, response) : send(connection, std::move(response));
}

void forget(void*, MHD_Connection*, void** state, MHD_RequestTerminationCode) {
  delete static_cast<Pending*>(*state);
  *state = nullptr;
}

std::uint16_t bound_port(MHD_Daemon* daemon) {
  const auto* info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
  return info ? info->port : 0;
}

std::string url_of(const ListenAddress& where, std::uint16_t port) {
  auto host = where.text.substr(0, where.text.rfind(':'));
  return fmt::format("http://{}:{}/", host, port);
}

// Connections at once, as the limit of open files allows.
unsigned connection_limit() {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0) return fewest_connections;
  if (files.rlim_cur == RLIM_INFINITY) return most_connections;
  if (files.rlim_cur < files_kept + fewest_connections) return fewest_connections;
  return static_cast<unsigned>(std::min<rlim_t>(most_connections, files.rlim_cur - files_kept));
}

// Raises the soft limit of open files to what most_connections needs, as far
// as the hard limit lets it: taskd web starts no process that inherits it.
void allow_files_for_connections() {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur == RLIM_INFINITY) return;
  rlim_t wanted = most_connections + files_kept;
  if (files.rlim_cur >= wanted) return;
  files.rlim_cur = files.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, files.rlim_max);
  ::setrlimit(RLIMIT_NOFILE, &files);  // a refusal leaves fewer connections, as connection_limit finds
}

// Bodies of a megabyte or more (a page of 5 000 tasks) get memory of their
// own from the kernel, given back once sent. Left to itself, glibc raises
// this threshold after the first such body is freed, and the next ones stay
// in the heaps of the server's threads, which do not shrink.
constexpr int own_memory_from = 1 << 20;
void give_large_bodies_back() { ::mallopt(M_MMAP_THRESHOLD, own_memory_from); }

// Blocks SIGINT and SIGTERM in this thread and in the server's threads
// (they inherit the mask), so that sigwait takes them.
sigset_t stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

}  // namespace

core::Result<ListenAddress> parse_listen_address(std::string_view text, std::string_view flag) {
  ListenAddress where{.text = std::string(text)};
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos)
    return fail(ErrorKind::usage, fmt::format("{} \"{}\": give ADDRESS:PORT, as 127.0.0.1:8080", flag, text));
  auto port = htons(TRY(parse_port(text.substr(colon + 1), text, flag)));
  auto host = std::string(text.substr(0, colon));
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&where.address);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = port;
    if (inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &v6->sin6_addr) == 1) {
      where.loopback = IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr);
      return where;
    }
  } else {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&where.address);
    v4->sin_family = AF_INET;
    v4->sin_port = port;
    if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
      where.loopback = (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
      return where;
    }
  }
  return fail(ErrorKind::usage,
              fmt::format("{} \"{}\": the address is a numeric IPv4 address or an IPv6 one in brackets "
                          "([::1]:8080)",
                          flag, text));
}

// The open streams, the handler's view of them, and the daemon serving
// both; the streams end before the daemon stops, which must not find a
// connection suspended.
struct Server::Parts {
  Parts(const Api& api, EventFeed feed) : streams(std::move(feed)), handlers{api, streams} {}
  ~Parts() { streams.stop(); }
  Streams streams;
  Handlers handlers;
  std::unique_ptr<MHD_Daemon, void (*)(MHD_Daemon*)> daemon{nullptr, MHD_stop_daemon};
};

Server::Server(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

Server::~Server() = default;

core::Result<std::unique_ptr<Server>> Server::start(const Api& api, EventFeed feed, const ListenAddress& where) {
  // The server's threads take no signal: they are the process's own to
  // read, in its main thread.
  sigset_t all, before;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &before);
  give_large_bodies_back();
  auto parts = std::make_unique<Parts>(api, std::move(feed));
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
  if (where.address.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
  auto* daemon = MHD_start_daemon(flags, 0, nullptr, nullptr, answer, &parts->handlers,                         //
                                  MHD_OPTION_SOCK_ADDR, &where.address,                                         //
                                  MHD_OPTION_THREAD_POOL_SIZE, worker_threads,                                  //
                                  MHD_OPTION_CONNECTION_LIMIT, connection_limit(),                              //
                                  MHD_OPTION_PER_IP_CONNECTION_LIMIT, where.loopback ? 0u : per_address_limit,  //
                                  MHD_OPTION_CONNECTION_TIMEOUT, idle_seconds,                                  //
                                  MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory,                        //
                                  MHD_OPTION_NOTIFY_COMPLETED, forget, nullptr,                                 //
                                  MHD_OPTION_END);
  int error = errno;
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  errno = error;
  if (!daemon)
    return fail(ErrorKind::unavailable, fmt::format("cannot listen on {}: {}", where.text, std::strerror(errno)));
  parts->daemon.reset(daemon);
  fmt::print("taskd: serving {}\n", url_of(where, bound_port(daemon)));
  std::fflush(stdout);
  return std::unique_ptr<Server>(new Server(std::move(parts)));
}

core::Result<void> serve(const Api& api, EventFeed feed, const ListenAddress& where) {
  allow_files_for_connections();
  auto signals = stop_signals();
  auto server = TRY(Server::start(api, std::move(feed), where));
  int signal = 0;
  sigwait(&signals, &signal);
  return {};
}

}  // namespace taskd::web
