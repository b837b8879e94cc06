#include "exec/output_buffer.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace taskd::exec {

void OutputBuffer::append(std::string_view bytes) {
  total_ += bytes.size();
  std::size_t to_head = std::min(bytes.size(), head_limit_ - head_.size());
  head_.append(bytes.substr(0, to_head));
  append_to_tail(bytes.substr(to_head));
}

void OutputBuffer::append_to_tail(std::string_view bytes) {
  if (tail_limit_ == 0 || bytes.empty()) return;
  if (bytes.size() >= tail_limit_) {
    tail_.assign(bytes.substr(bytes.size() - tail_limit_));
    tail_start_ = 0;
    return;
  }
  // Grow to the limit, then overwrite the oldest, in at most two copies.
  std::size_t room = tail_limit_ - tail_.size();
  tail_.append(bytes.substr(0, std::min(room, bytes.size())));
  bytes.remove_prefix(std::min(room, bytes.size()));
  while (!bytes.empty()) {
    std::size_t piece = std::min(bytes.size(), tail_limit_ - tail_start_);
    tail_.replace(tail_start_, piece, bytes.substr(0, piece));
    tail_start_ = (tail_start_ + piece) % tail_limit_;
    bytes.remove_prefix(piece);
  }
}

std::string OutputBuffer::contents() const {
  std::string out;
  out.reserve(head_.size() + tail_.size() + (truncated() ? 80 : 0));
  out.append(head_);
  if (truncated()) {
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += cut_line(cut_bytes());
  }
  out.append(tail_, tail_start_);
  out.append(tail_, 0, tail_start_);
  return out;
}

OutputBuffer::Kept OutputBuffer::kept() const {
  std::string tail = tail_.substr(tail_start_) + tail_.substr(0, tail_start_);
  return {head_limit_ + tail_limit_, head_, std::move(tail), total_};
}

std::optional<OutputBuffer> OutputBuffer::from(Kept kept) {
  OutputBuffer buffer(kept.keep);
  bool head_full = kept.head.size() == buffer.head_limit_;
  if (kept.head.size() > buffer.head_limit_ || kept.tail.size() > buffer.tail_limit_ ||
      (!kept.tail.empty() && !head_full) || kept.total < kept.head.size() + kept.tail.size() ||
      (kept.total > kept.head.size() + kept.tail.size() && kept.tail.size() != buffer.tail_limit_))
    return std::nullopt;
  buffer.head_ = std::move(kept.head);
  buffer.tail_ = std::move(kept.tail);
  buffer.total_ = kept.total;
  return buffer;
}

std::string cut_line(std::size_t bytes) {
  if (bytes < 1024) return fmt::format("[taskd: {} byte{} of output cut here]\n", bytes, bytes == 1 ? "" : "s");
  double size = static_cast<double>(bytes) / 1024;
  const char* unit = "KiB";
  for (const char* larger : {"MiB", "GiB"}) {
    if (size < 1024) break;
    size /= 1024;
    unit = larger;
  }
  return fmt::format("[taskd: {:.1f} {} ({} bytes) of output cut here]\n", size, unit, bytes);
}

}  // namespace taskd::exec
