#pragma once
// Explicit instants for tests: at(14, 0) is 2026-11-21 14:00:00 UTC.
#include <chrono>

#include "core/time.hpp"

namespace taskd::test {

inline core::Time at(int hh, int mm, int ss = 0, int ms = 0) {
  using namespace std::chrono;
  return sys_days{year{2026} / November / 21} + hours{hh} + minutes{mm} + seconds{ss} + milliseconds{ms};
}

}  // namespace taskd::test
