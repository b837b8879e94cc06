#pragma once
// Notices writes to the database by any process, so a sleeping loop wakes
// at once when `taskd add` or another worker changes something: for a
// SQLite file, inotify on its directory (for the file and its -wal); for a
// server, its change notices (LISTEN). An event is only a hint:
// store::data_version tells whether another connection committed.
#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "store/database.hpp"

namespace taskd::sched {

class ChangeWatch {
 public:
  static core::Result<ChangeWatch> open(store::Database& db);
  ChangeWatch(ChangeWatch&& other) noexcept;
  ChangeWatch& operator=(ChangeWatch&&) = delete;
  ChangeWatch(const ChangeWatch&) = delete;
  ~ChangeWatch();

  // The descriptor to poll (a server's may change when it reconnects; -1
  // while it cannot be reached, and the loop's timer looks again).
  int fd();
  // Reads the pending events; true if one was about the database or its WAL.
  bool drain();

 private:
  ChangeWatch(int fd, std::filesystem::path database, store::Database* server)
      : fd_(fd), name_(database.filename().string()), server_(server) {}
  int fd_;
  std::string name_;
  store::Database* server_;  // null for a SQLite file
};

}  // namespace taskd::sched
