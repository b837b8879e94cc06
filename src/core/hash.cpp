#include "core/hash.hpp"

namespace taskd::core {

std::uint64_t stable_hash(std::string_view text, std::uint64_t salt) {
  std::uint64_t hash = 14695981039346656037ULL ^ salt;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  hash += 0x9e3779b97f4a7c15ULL;
  hash = (hash ^ (hash >> 30)) * 0xbf58476d1ce4e5b9ULL;
  hash = (hash ^ (hash >> 27)) * 0x94d049bb133111ebULL;
  return hash ^ (hash >> 31);
}

Millis default_phase(std::string_view name, Seconds interval) {
  auto range = std::chrono::duration_cast<Millis>(interval).count();
  if (range <= 0) return Millis{0};
  return Millis{static_cast<std::int64_t>(stable_hash(name, 0x7068617365 /* "phase" */) %
                                          static_cast<std::uint64_t>(range))};
}

}  // namespace taskd::core
