#include <doctest/doctest.h>

#include <string>

#include "core/text.hpp"

using namespace taskd::core;

TEST_CASE("well-formed UTF-8 has no invalid byte, whatever its characters") {
  CHECK_FALSE(invalid_utf8_at(""));
  CHECK_FALSE(invalid_utf8_at("plain ascii, with a tab\t and a newline\n"));
  CHECK_FALSE(invalid_utf8_at("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));  // é € 😀
  CHECK_FALSE(invalid_utf8_at("\xef\xbf\xbd"));                               // U+FFFD itself
  CHECK_FALSE(invalid_utf8_at("\xf4\x8f\xbf\xbf"));                           // U+10FFFF, the last
}

TEST_CASE("the first byte that is not well-formed UTF-8 is found by its offset") {
  CHECK(invalid_utf8_at("ab\xff") == 2u);
  CHECK(invalid_utf8_at("\x80") == 0u);                      // a continuation byte alone
  CHECK(invalid_utf8_at("ok \xc3") == 3u);                   // a sequence cut short at the end
  CHECK(invalid_utf8_at("\xc3(") == 0u);                     // a lead byte without its continuation
  CHECK(invalid_utf8_at("\xc0\xaf") == 0u);                  // overlong '/'
  CHECK(invalid_utf8_at("\xe0\x80\xaf") == 0u);              // overlong, three bytes
  CHECK(invalid_utf8_at("x\xed\xa0\x80") == 1u);             // a surrogate (U+D800)
  CHECK(invalid_utf8_at("\xf4\x90\x80\x80") == 0u);          // past U+10FFFF
  CHECK(invalid_utf8_at("\xc3\xa9\xf5\x80\x80\x80") == 2u);  // no lead byte beyond F4
}

TEST_CASE("require_utf8 names what was given, shows it printable and counts the bad byte from 1") {
  CHECK(require_utf8("--owner", "fine"));
  auto refused = require_utf8("--owner", "ab\xff!");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == ErrorKind::bad_input);
  CHECK(refused.error().message == "--owner \"ab\\xff!\": not valid UTF-8 at byte 3");
}

TEST_CASE("require_utf8 quotes a long text only around its bad byte, never cutting a character") {
  std::string text = std::string(100, 'a') + "\xc3\xa9" + std::string(30, 'b') + "\xfe" + std::string(100, 'c');
  auto refused = require_utf8("command", text);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == "command \"…\xc3\xa9" + std::string(30, 'b') + "\\xfe" + std::string(31, 'c') +
                                       "…\": not valid UTF-8 at byte 133");
}

TEST_CASE("valid_utf8 replaces each bad byte by U+FFFD and keeps the rest") {
  CHECK(valid_utf8("caf\xc3\xa9") == "caf\xc3\xa9");
  CHECK(valid_utf8("a\xff-\xc3") == "a\xef\xbf\xbd-\xef\xbf\xbd");
  CHECK(valid_utf8("\xe2\x82") == "\xef\xbf\xbd\xef\xbf\xbd");
}

TEST_CASE("printable shows newline and tab as \\n and \\t, other control characters and bad bytes as \\xNN") {
  CHECK(printable("a\nb\tc") == "a\\nb\\tc");
  CHECK(printable("\x1b]0;owned\x07\x1b[2J") == "\\x1b]0;owned\\x07\\x1b[2J");
  CHECK(printable("del\x7f") == "del\\x7f");
  CHECK(printable("\xc2\x9b[31m") == "\\xc2\\x9b[31m");  // C1 CSI, well-formed but a control
  CHECK(printable("o\xff") == "o\\xff");
  CHECK(printable("caf\xc3\xa9 \xc2\xa0") == "caf\xc3\xa9 \xc2\xa0");  // é and a no-break space stay
  CHECK(printable("back\\slash") == "back\\slash");
}

TEST_CASE("needs_escaping is true exactly when printable changes the text") {
  for (std::string text : {"", "plain", "caf\xc3\xa9", "a\nb", "\x1b[1m", "\xc2\x85", "\xff", "\xe2\x82", "\xc2\xa0"}) {
    CAPTURE(text);
    CHECK(needs_escaping(text) == (printable(text) != text));
  }
}
