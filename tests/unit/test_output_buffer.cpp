#include <doctest/doctest.h>

#include <string>

#include "exec/output_buffer.hpp"

using taskd::exec::cut_line;
using taskd::exec::OutputBuffer;

namespace {

// What a buffer keeping `head` and `tail` bytes of `all` shows.
std::string head_cut_tail(const std::string& all, std::size_t head, std::size_t tail) {
  std::string kept = all.substr(0, head);
  if (!kept.empty() && kept.back() != '\n') kept += '\n';
  return kept + cut_line(all.size() - head - tail) + all.substr(all.size() - tail);
}

}  // namespace

TEST_CASE("output under the limit is kept whole") {
  OutputBuffer buffer(10);
  buffer.append("abc");
  buffer.append("def");
  CHECK(buffer.contents() == "abcdef");
  CHECK_FALSE(buffer.truncated());
}

TEST_CASE("output at exactly the limit is not truncated") {
  OutputBuffer buffer(6);
  buffer.append("abcdef");
  CHECK(buffer.contents() == "abcdef");
  CHECK_FALSE(buffer.truncated());
}

TEST_CASE("the first quarter and the last three quarters are kept, with a line saying how much was cut") {
  OutputBuffer buffer(8);  // a head of 2 bytes, a tail of 6
  std::string all;
  for (char c = 'a'; c <= 'z'; ++c) {
    std::string piece(static_cast<std::size_t>(c - 'a') % 3 + 1, c);
    buffer.append(piece);
    all += piece;
    CAPTURE(all);
    CHECK(buffer.contents() == (all.size() > 8 ? head_cut_tail(all, 2, 6) : all));
  }
  CHECK(buffer.truncated());
  CHECK(buffer.total_bytes() == all.size());
  CHECK(buffer.cut_bytes() == all.size() - 8);
}

TEST_CASE("one write larger than the limit fills the head and keeps its tail") {
  OutputBuffer buffer(8);
  buffer.append("x");
  buffer.append("0123456789");
  CHECK(buffer.contents() == "x0\n" + cut_line(3) + "456789");
  buffer.append("ab");
  CHECK(buffer.contents() == "x0\n" + cut_line(5) + "6789ab");
}

TEST_CASE("the cut line follows a head that ends a line without a blank line") {
  OutputBuffer buffer(8);
  buffer.append("a\nbbbbbbbbbbbb\ncccc\n");
  CHECK(buffer.contents() == "a\n" + cut_line(12) + "\ncccc\n");
}

TEST_CASE("the cut line counts the bytes cut exactly, in words and in bytes") {
  CHECK(cut_line(1) == "[taskd: 1 byte of output cut here]\n");
  CHECK(cut_line(1023) == "[taskd: 1023 bytes of output cut here]\n");
  CHECK(cut_line(241664) == "[taskd: 236.0 KiB (241664 bytes) of output cut here]\n");
  CHECK(cut_line(3355443) == "[taskd: 3.2 MiB (3355443 bytes) of output cut here]\n");
  CHECK(cut_line(std::size_t{5} << 30) == "[taskd: 5.0 GiB (5368709120 bytes) of output cut here]\n");

  OutputBuffer buffer(64 * 1024);
  std::string all;
  for (std::size_t i = 0; all.size() < 300 * 1024; ++i) all += "line " + std::to_string(i) + "\n";
  for (std::size_t at = 0, piece = 1; at < all.size(); at += piece, piece = piece * 7 % 9000 + 1)
    buffer.append(std::string_view(all).substr(at, piece));
  CHECK(buffer.cut_bytes() == all.size() - 64 * 1024);
  CHECK(buffer.contents() == head_cut_tail(all, 16 * 1024, 48 * 1024));
}

TEST_CASE("however much a run writes, the buffer holds the limit and one line") {
  OutputBuffer buffer(4096);
  std::string chunk(65536, 'y');
  for (int i = 0; i < 256; ++i) buffer.append(chunk);  // 16 MiB
  CHECK(buffer.total_bytes() == std::size_t{16} << 20);
  CHECK(buffer.contents().size() == 4096 + 1 + cut_line(buffer.cut_bytes()).size());
}

TEST_CASE("a zero limit keeps nothing but the line saying what was cut") {
  OutputBuffer buffer(0);
  buffer.append("abc");
  CHECK(buffer.contents() == cut_line(3));
  CHECK(buffer.truncated());
}

TEST_CASE("a buffer handed to a next image of taskd goes on as it would have") {
  OutputBuffer buffer(8);
  OutputBuffer kept_all_along(8);
  for (auto piece : {"abc", "defghij", "klm"}) {
    buffer.append(piece);
    kept_all_along.append(piece);
  }
  auto taken_over = OutputBuffer::from(buffer.kept());
  REQUIRE(taken_over.has_value());
  taken_over->append("nopq");
  kept_all_along.append("nopq");
  CHECK(taken_over->contents() == kept_all_along.contents());
  CHECK(taken_over->total_bytes() == kept_all_along.total_bytes());
}

TEST_CASE("no buffer is made of what no buffer could have held") {
  CHECK_FALSE(OutputBuffer::from({.keep = 8, .head = "abc", .tail = "de", .total = 5}).has_value());  // head not full
  CHECK_FALSE(OutputBuffer::from({.keep = 8, .head = "ab", .tail = "", .total = 1}).has_value());     // more than written
  CHECK_FALSE(OutputBuffer::from({.keep = 8, .head = "ab", .tail = "cde", .total = 9}).has_value());  // cut, tail not full
  CHECK(OutputBuffer::from({.keep = 8, .head = "ab", .tail = "cdefgh", .total = 9}).has_value());
}
