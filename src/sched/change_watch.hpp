#pragma once
// Notices writes to the database file by any process (inotify on its
// directory, for the file and its -wal), so a sleeping loop wakes at once
// when `taskd add` or another worker changes something. An event is only a
// hint: PRAGMA data_version tells whether another connection committed.
#include <filesystem>
#include <string>

#include "core/error.hpp"

namespace taskd::sched {

class ChangeWatch {
 public:
  static core::Result<ChangeWatch> open(const std::filesystem::path& database);
  ChangeWatch(ChangeWatch&& other) noexcept;
  ChangeWatch& operator=(ChangeWatch&&) = delete;
  ChangeWatch(const ChangeWatch&) = delete;
  ~ChangeWatch();

  int fd() const { return fd_; }
  // Reads the pending events; true if one was about the database or its WAL.
  bool drain();

 private:
  ChangeWatch(int fd, std::filesystem::path database) : fd_(fd), name_(database.filename().string()) {}
  int fd_;
  std::string name_;
};

}  // namespace taskd::sched
