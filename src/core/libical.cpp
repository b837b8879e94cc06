#include "core/libical.hpp"

#include <dlfcn.h>

namespace taskd::core {
namespace {

Error load_error(const char* what) {
  return {ErrorKind::unavailable,
          std::string("cannot load " TASKD_LIBICAL_SONAME " (RRULE schedules need libical): ") + what};
}

template <class Function>
bool resolve(void* library, const char* name, Function& out) {
  out = reinterpret_cast<Function>(::dlsym(library, name));
  return out != nullptr;
}

Result<LibIcal> load() {
  void* library = ::dlopen(TASKD_LIBICAL_SONAME, RTLD_NOW | RTLD_LOCAL);  // kept open for the process's life
  if (!library) return std::unexpected(load_error(::dlerror()));
  LibIcal ical{};
  bool found = resolve(library, "icalerror_clear_errno", ical.clear_errno) &&
               resolve(library, "icalrecurrencetype_from_string", ical.recurrence_from_string) &&
               resolve(library, "icalrecur_iterator_new", ical.iterator_new) &&
               resolve(library, "icalrecur_iterator_set_start", ical.iterator_set_start) &&
               resolve(library, "icalrecur_iterator_next", ical.iterator_next) &&
               resolve(library, "icalrecur_iterator_free", ical.iterator_free) &&
               resolve(library, "icaltime_null_time", ical.null_time) &&
               resolve(library, "icaltime_is_null_time", ical.is_null_time);
  if (!found) return std::unexpected(load_error(::dlerror()));
  return ical;
}

}  // namespace

const Result<LibIcal>& libical() {
  static const Result<LibIcal> loaded = load();
  return loaded;
}

}  // namespace taskd::core
