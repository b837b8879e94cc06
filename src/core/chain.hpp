#pragma once
// Chains (--after): a task that runs when another's run has reached its
// final outcome, on success only or (":finished") whatever the outcome.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace taskd::core {

// The task whose runs start this one; an empty name: none.
struct Upstream {
  std::string task;
  bool on_any_outcome = false;  // ":finished": after a final failure too
  bool operator==(const Upstream&) const = default;
};

// "backup" or "backup:finished"; "" for none. A name may hold ':', but a
// trailing ":finished" is always read as the mode.
std::string to_string(const Upstream& upstream);
Result<Upstream> parse_upstream(std::string_view text);

// Each chained task's name and the name of its upstream.
using UpstreamOf = std::map<std::string, std::string, std::less<>>;

// A cycle of the chains, if any: its names in the order they run, starting
// and ending with the smallest of them ({"a", "b", "a"}: b after a, a after
// b; {"a", "a"}: a after itself). Empty when the chains have no cycle.
std::vector<std::string> find_cycle(const UpstreamOf& upstream_of);

// "a -> b -> a".
std::string describe_cycle(const std::vector<std::string>& cycle);

}  // namespace taskd::core
