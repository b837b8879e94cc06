#pragma once
// Keeps the head and the tail of what a child wrote, `keep` bytes in all, so
// a chatty task cannot fill the disk or the memory: the head shows what
// started, the tail what explains a failure. A quarter goes to the head and
// the rest to the tail, as the end is what a run's reader most wants.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace taskd::exec {

class OutputBuffer {
 public:
  explicit OutputBuffer(std::size_t keep) : head_limit_(keep / 4), tail_limit_(keep - keep / 4) {}

  void append(std::string_view bytes);

  // The kept bytes in the order written; when some were cut, the head, a
  // line saying how many bytes were cut, then the tail.
  std::string contents() const;
  // Whether bytes between the head and the tail were cut.
  bool truncated() const { return cut_bytes() > 0; }
  std::size_t cut_bytes() const { return total_ - head_.size() - tail_.size(); }
  std::size_t total_bytes() const { return total_; }

  // What it holds, for a next image of taskd to take over: the bytes it
  // keeps, its head, its tail in the order written, and the bytes written.
  struct Kept {
    std::size_t keep = 0;
    std::string head;
    std::string tail;
    std::size_t total = 0;
  };
  Kept kept() const;
  // The buffer that held `kept`; none when no buffer could have.
  static std::optional<OutputBuffer> from(Kept kept);

 private:
  void append_to_tail(std::string_view bytes);

  std::size_t head_limit_;
  std::size_t tail_limit_;
  std::size_t total_ = 0;
  std::string head_;
  std::string tail_;            // a ring once it holds tail_limit_ bytes
  std::size_t tail_start_ = 0;  // index of the oldest byte of the full ring
};

// The line between the head and the tail: "[taskd: 236.0 KiB (241664 bytes) of output cut here]".
std::string cut_line(std::size_t bytes);

}  // namespace taskd::exec
