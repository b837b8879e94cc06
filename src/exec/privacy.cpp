#include "exec/privacy.hpp"

#include <sys/prctl.h>

namespace taskd::exec {

void keep_memory_private() { ::prctl(PR_SET_DUMPABLE, 0); }

}  // namespace taskd::exec
