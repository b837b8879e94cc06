#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "core/error.hpp"

using namespace taskd::core;

namespace {

Result<int> parse_digit(char c) {
  if (c < '0' || c > '9') return fail(ErrorKind::bad_input, std::string("not a digit: ") + c);
  return c - '0';
}

Result<int> sum_of_digits(const std::string& text) {
  int sum = 0;
  for (char c : text) sum += TRY(parse_digit(c));
  return sum;
}

Result<void> check_digit(char c) {
  TRY(parse_digit(c));
  return {};
}

Result<std::unique_ptr<int>> boxed(int value) { return std::make_unique<int>(value); }

Result<int> unboxed(int value) {
  auto box = TRY(boxed(value));
  return *box;
}

}  // namespace

TEST_CASE("TRY yields the value, or returns the error from the enclosing function") {
  CHECK(sum_of_digits("123").value() == 6);
  auto failed = sum_of_digits("1x3");
  REQUIRE_FALSE(failed);
  CHECK(failed.error().kind == ErrorKind::bad_input);
  CHECK(failed.error().message == "not a digit: x");
}

TEST_CASE("TRY on a Result<void> passes its error on and yields nothing") {
  CHECK(check_digit('7'));
  CHECK(check_digit('y').error().message == "not a digit: y");
}

TEST_CASE("TRY moves a value that cannot be copied out of its Result") {
  CHECK(unboxed(5).value() == 5);
}

TEST_CASE("TRY inside a lambda returns from the lambda") {
  auto twice = [](char c) -> Result<int> { return 2 * TRY(parse_digit(c)); };
  CHECK(twice('4').value() == 8);
  CHECK_FALSE(twice('z'));
}
