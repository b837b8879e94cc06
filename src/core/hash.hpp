#pragma once
// Stable hashing: the same name gives the same number on every machine and in
// every release, so phases and jitter never move under a user's feet.
#include <cstdint>
#include <string_view>

#include "core/duration.hpp"
#include "core/time.hpp"

namespace taskd::core {

// FNV-1a over the bytes, finished with a SplitMix64 mix; `salt` separates uses.
std::uint64_t stable_hash(std::string_view text, std::uint64_t salt = 0);

// The default phase of a fixed-rate task: a stable point within its interval,
// to the millisecond, so many tasks added at once spread evenly instead of
// starting together (within each second too).
Millis default_phase(std::string_view name, Seconds interval);

}  // namespace taskd::core
