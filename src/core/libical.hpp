#pragma once
// libical, loaded on first use: only RRULE schedules need it, and linking it
// (with the ICU libraries it pulls in) cost every taskd process about 1 ms of
// dynamic loading before main, a tick with nothing due included.
#include <libical/ical.h>

#include "core/error.hpp"

namespace taskd::core {

// The libical functions taskd calls.
struct LibIcal {
  decltype(&icalerror_clear_errno) clear_errno;
  decltype(&icalrecurrencetype_from_string) recurrence_from_string;
  decltype(&icalrecur_iterator_new) iterator_new;
  decltype(&icalrecur_iterator_set_start) iterator_set_start;
  decltype(&icalrecur_iterator_next) iterator_next;
  decltype(&icalrecur_iterator_free) iterator_free;
  decltype(&icaltime_null_time) null_time;
  decltype(&icaltime_is_null_time) is_null_time;
};

// Loads the library the first time (thread-safe) and returns the same answer
// ever after; an error (unavailable) names the library and what is missing.
const Result<LibIcal>& libical();

}  // namespace taskd::core
