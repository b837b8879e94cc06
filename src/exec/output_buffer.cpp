#include "exec/output_buffer.hpp"

namespace taskd::exec {

void OutputBuffer::append(std::string_view bytes) {
  total_ += bytes.size();
  if (limit_ == 0) return;
  if (bytes.size() >= limit_) {
    data_.assign(bytes.substr(bytes.size() - limit_));
    start_ = 0;
    return;
  }
  if (data_.size() + bytes.size() <= limit_) {
    data_.append(bytes);
    return;
  }
  // The ring is (or becomes) full: grow to the limit, then overwrite the oldest.
  std::size_t room = limit_ - data_.size();
  data_.append(bytes.substr(0, room));
  bytes.remove_prefix(room);
  for (char c : bytes) {
    data_[start_] = c;
    start_ = (start_ + 1) % limit_;
  }
}

std::string OutputBuffer::contents() const {
  if (start_ == 0) return data_;
  return data_.substr(start_) + data_.substr(0, start_);
}

}  // namespace taskd::exec
