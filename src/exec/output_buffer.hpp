#pragma once
// Keeps the last `limit` bytes a child wrote, so a chatty task cannot fill
// the disk or the memory: the tail is what explains a failure.
#include <cstddef>
#include <string>
#include <string_view>

namespace taskd::exec {

class OutputBuffer {
 public:
  explicit OutputBuffer(std::size_t limit) : limit_(limit) {}

  void append(std::string_view bytes);

  // The kept bytes, oldest first.
  std::string contents() const;
  // Whether older bytes were discarded.
  bool truncated() const { return total_ > data_.size(); }
  std::size_t total_bytes() const { return total_; }

 private:
  std::size_t limit_;
  std::size_t total_ = 0;
  std::size_t start_ = 0;  // index of the oldest byte once the ring is full
  std::string data_;
};

}  // namespace taskd::exec
