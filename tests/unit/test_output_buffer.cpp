#include <doctest/doctest.h>

#include <string>

#include "exec/output_buffer.hpp"

using taskd::exec::OutputBuffer;

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

TEST_CASE("only the last bytes are kept when output outgrows the limit") {
  OutputBuffer buffer(5);
  std::string all;
  for (char c = 'a'; c <= 'z'; ++c) {
    std::string piece(static_cast<std::size_t>(c - 'a') % 3 + 1, c);
    buffer.append(piece);
    all += piece;
    CAPTURE(all);
    CHECK(buffer.contents() == all.substr(all.size() > 5 ? all.size() - 5 : 0));
  }
  CHECK(buffer.truncated());
  CHECK(buffer.total_bytes() == all.size());
}

TEST_CASE("one write larger than the limit keeps its tail") {
  OutputBuffer buffer(4);
  buffer.append("xy");
  buffer.append("0123456789");
  CHECK(buffer.contents() == "6789");
  buffer.append("ab");
  CHECK(buffer.contents() == "89ab");
}

TEST_CASE("a zero limit keeps nothing but counts") {
  OutputBuffer buffer(0);
  buffer.append("abc");
  CHECK(buffer.contents().empty());
  CHECK(buffer.truncated());
}
