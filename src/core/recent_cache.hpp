#pragma once
// A small cache of values made from large keys, for work a process repeats
// with the same inputs (a task's calendar days at every read of its row):
// the `capacity` keys met last are kept, the one unused longest goes first.
// A key is found by its hash and then compared whole, so a hash that two
// keys share never hands one the other's value. Safe to use from threads;
// values are shared, never changed.
#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

namespace taskd::core {

// A hash of a large key from its size and a few dozen of its bytes spread
// over it. RecentCache compares keys whole, so a weak hash costs at worst a
// compare, never a wrong value; hashing all of 100 kB at every lookup costs
// more than the compare (a memcmp).
inline std::size_t sampled_hash(std::string_view bytes) {
  constexpr std::size_t samples = 64;
  std::size_t hash = 0xcbf29ce484222325ULL ^ bytes.size();
  const std::size_t step = std::max<std::size_t>(1, bytes.size() / samples);
  for (std::size_t i = 0; i < bytes.size(); i += step)
    hash = (hash ^ static_cast<unsigned char>(bytes[i])) * 0x100000001b3ULL;
  if (!bytes.empty()) hash = (hash ^ static_cast<unsigned char>(bytes.back())) * 0x100000001b3ULL;
  return hash;
}

template <class Key, class Value>
class RecentCache {
 public:
  explicit RecentCache(std::size_t capacity) : capacity_(capacity) {}

  // The value of the key equal to `key`; none when it is not kept.
  template <class Like>
  std::shared_ptr<const Value> find(std::size_t hash, const Like& key) {
    std::lock_guard lock(mutex_);
    auto hit = std::ranges::find_if(entries_, [&](const Entry& e) { return e.hash == hash && e.key == key; });
    if (hit == entries_.end()) return nullptr;
    std::rotate(hit, std::next(hit), entries_.end());  // the last used at the back
    return entries_.back().value;
  }

  // The value kept for `key`, else make()'s, kept from now on.
  template <class Make>
  Value value_of(Key key, Make make) {
    auto hash = std::hash<Key>{}(key);
    if (auto kept = find(hash, key)) return *kept;
    Value value = make();
    insert(hash, std::move(key), std::make_shared<const Value>(value));
    return value;
  }

  void insert(std::size_t hash, Key key, std::shared_ptr<const Value> value) {
    std::lock_guard lock(mutex_);
    if (std::ranges::any_of(entries_, [&](const Entry& e) { return e.hash == hash && e.key == key; })) return;
    if (entries_.size() >= capacity_) entries_.erase(entries_.begin());
    entries_.push_back({hash, std::move(key), std::move(value)});
  }

 private:
  struct Entry {
    std::size_t hash;
    Key key;
    std::shared_ptr<const Value> value;
  };
  std::size_t capacity_;
  std::mutex mutex_;
  std::vector<Entry> entries_;
};

}  // namespace taskd::core
