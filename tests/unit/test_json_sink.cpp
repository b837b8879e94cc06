#include <doctest/doctest.h>

#include <limits>

#include "ops/json_sink.hpp"

using taskd::ops::Json;
using taskd::ops::JsonBuilder;
using taskd::ops::JsonLayout;
using taskd::ops::JsonTextWriter;

namespace {

std::string written(const Json& document, JsonLayout layout = JsonLayout::indented) {
  fmt::memory_buffer out;
  JsonTextWriter writer(out, layout);
  writer.document(document);
  return fmt::to_string(out);
}

std::string dumped(const Json& document) { return document.dump(2, ' ', false, Json::error_handler_t::replace); }

}  // namespace

TEST_CASE("the text writer prints what a document's dump(2) prints") {
  auto documents = {
      Json(nullptr),
      Json::object(),
      Json::array(),
      Json::parse(R"({"a": {}, "b": [], "c": [[], {}, [1, [2, {"d": null}]]], "e": {"f": {"g": true}}})"),
      Json{{"int", -42}, {"big", std::numeric_limits<std::int64_t>::max()}, {"unsigned", 18446744073709551615ULL}},
      Json{{"half", 0.5}, {"whole", 2.0}, {"small", 1e-7}, {"large", 1.5e300}, {"ms", 0.063}},
      Json{{"quote\"key", "back\\slash"}, {"ctl", std::string("a\x01\x1f\x7f\tb\nc\r", 9)}, {"esc", "\x1b[31mred"}},
      Json{{"utf8", "zürich ✓ 𝄞"}, {"bad", std::string("a\xff\xfe b \xe2\x82 c \xc3", 12)}, {"tag", "<script>"}},
      Json::array({Json::object({{"deep", Json::array({Json::array({Json::array({Json::array({1})})})})}})}),
  };
  for (const auto& document : documents) CHECK(written(document) == dumped(document));
}

TEST_CASE("values put one at a time come out as the same document built") {
  auto describe = [](taskd::ops::JsonSink& out) {
    out.begin_object();
    out.field("name", "x");
    out.field("none", std::optional<std::string>());
    out.field("some", std::optional<std::int64_t>(3));
    out.field("codes", std::vector<int>{78, 75});
    out.field("flag", false);
    out.field("seconds", 1.25);
    out.key("nested");
    out.begin_array();
    out.put(std::monostate{});
    out.end();
    out.end();
  };
  JsonBuilder builder;
  describe(builder);
  auto document = builder.take();
  CHECK(document == Json::parse(R"({"name": "x", "none": null, "some": 3, "codes": [78, 75], "flag": false,
                                    "seconds": 1.25, "nested": [null]})"));
  fmt::memory_buffer text;
  JsonTextWriter writer(text);
  describe(writer);
  CHECK(fmt::to_string(text) == dumped(document));
}

TEST_CASE("the compact layout is dump()'s, with a line per element of an outermost array") {
  auto listing = Json::parse(R"([{"a": [1, [2, {}]], "b": {"c": null}}, [], "x\ty", 0.5])");
  CHECK(written(listing, JsonLayout::compact) == "[\n" R"({"a":[1,[2,{}]],"b":{"c":null}},)" "\n[],\n\"x\\ty\",\n0.5\n]");
  CHECK(written(Json::array(), JsonLayout::compact) == "[]");
  auto object = Json::parse(R"({"list": [1, 2], "o": {"k": "v"}})");
  CHECK(written(object, JsonLayout::compact) == object.dump());
  auto escaped_keys = Json{{"quote\"key", 1}, {"z\u00fcrich", {{"\x1b[2J", true}}}};
  CHECK(written(escaped_keys, JsonLayout::compact) == escaped_keys.dump());
  CHECK(Json::parse(written(listing, JsonLayout::compact)) == listing);
}

TEST_CASE("a byte to escape is found wherever it stands in a string") {
  for (int byte : std::initializer_list<int>{0x00, 0x0a, 0x1f, 0x20, '!', '"', '#', '[', '\\', ']', 0x7e, 0x7f, 0x80,
                                           0xc3, 0xff}) {
    for (std::size_t size = 1; size <= 17; ++size) {
      for (std::size_t at = 0; at < size; ++at) {
        std::string text(size, 'a');
        text[at] = static_cast<char>(byte);
        CAPTURE(byte);
        CAPTURE(text);
        CHECK(written(Json(text)) == dumped(Json(text)));
        Json keyed{{text, 1}};
        CHECK(written(keyed, JsonLayout::compact) == keyed.dump(-1, ' ', false, Json::error_handler_t::replace));
      }
    }
  }
}
