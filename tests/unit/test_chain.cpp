#include <doctest/doctest.h>

#include "core/chain.hpp"

using namespace taskd::core;
using Names = std::vector<std::string>;

TEST_CASE("--after reads TASK and TASK:finished, and writes them back") {
  CHECK(parse_upstream("backup").value() == Upstream{"backup", false});
  CHECK(parse_upstream("backup:finished").value() == Upstream{"backup", true});
  CHECK(parse_upstream("db:main:finished").value() == Upstream{"db:main", true});
  CHECK(parse_upstream("").value() == Upstream{});
  for (const auto* text : {"backup", "backup:finished", "db:main"})
    CHECK(to_string(parse_upstream(text).value()) == text);
  CHECK(to_string(Upstream{}).empty());
  CHECK_FALSE(parse_upstream(":finished"));
  auto spaced = parse_upstream("my task");
  REQUIRE_FALSE(spaced);
  CHECK(spaced.error().message.find("my task") != std::string::npos);
}

TEST_CASE("chains without a cycle have none") {
  CHECK(find_cycle({}).empty());
  CHECK(find_cycle({{"b", "a"}, {"c", "b"}, {"d", "b"}, {"e", "gone"}}).empty());
}

TEST_CASE("a cycle is named in run order from its smallest name") {
  CHECK(find_cycle({{"a", "a"}}) == Names{"a", "a"});
  // b after a, c after b, a after c: a runs, then b, then c, then a again.
  auto cycle = find_cycle({{"b", "a"}, {"c", "b"}, {"a", "c"}});
  CHECK(cycle == Names{"a", "b", "c", "a"});
  CHECK(describe_cycle(cycle) == "a -> b -> c -> a");
  // A chain that leads into a cycle is not part of it.
  CHECK(find_cycle({{"a", "z"}, {"y", "x"}, {"x", "y"}, {"z", "y"}}) == Names{"x", "y", "x"});
}
