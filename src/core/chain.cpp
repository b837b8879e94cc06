#include "core/chain.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "core/task.hpp"

namespace taskd::core {
namespace {

constexpr std::string_view finished_suffix = ":finished";

// The cycle that the walk up from `start` enters, in the order the walk
// met its names; empty when the walk ends at a task without an upstream or
// at one known to lead to none (`acyclic`, which the walk adds to).
std::vector<std::string> cycle_above(const UpstreamOf& upstream_of, const std::string& start,
                                     std::set<std::string, std::less<>>& acyclic) {
  std::vector<std::string> path;
  std::string at = start;
  while (true) {
    if (acyclic.contains(at)) break;
    if (auto seen = std::ranges::find(path, at); seen != path.end()) return {seen, path.end()};
    path.push_back(at);
    auto up = upstream_of.find(at);
    if (up == upstream_of.end()) break;
    at = up->second;
  }
  acyclic.insert(path.begin(), path.end());
  return {};
}

}  // namespace

std::string to_string(const Upstream& upstream) {
  if (upstream.task.empty()) return "";
  return upstream.on_any_outcome ? upstream.task + std::string(finished_suffix) : upstream.task;
}

Result<Upstream> parse_upstream(std::string_view text) {
  if (text.empty()) return Upstream{};
  Upstream upstream;
  if (text.ends_with(finished_suffix)) {
    text.remove_suffix(finished_suffix.size());
    upstream.on_any_outcome = true;
  }
  upstream.task = TRY(validate_task_name(text));
  return upstream;
}

std::vector<std::string> find_cycle(const UpstreamOf& upstream_of) {
  std::set<std::string, std::less<>> acyclic;
  for (const auto& [name, upstream] : upstream_of) {
    auto walked = cycle_above(upstream_of, name, acyclic);
    if (walked.empty()) continue;
    // The walk went up from follower to upstream: the run order is the reverse.
    std::ranges::reverse(walked);
    std::ranges::rotate(walked, std::ranges::min_element(walked));
    walked.push_back(walked.front());
    return walked;
  }
  return {};
}

std::string describe_cycle(const std::vector<std::string>& cycle) {
  return fmt::format("{}", fmt::join(cycle, " -> "));
}

}  // namespace taskd::core
