#pragma once
// What differs between a task's stored definition and a task file's.
#include <string>
#include <vector>

#include "core/task.hpp"

namespace taskd::ops {

// The names of the definition fields (as in --json) that differ between
// `before` and `after`, in SPEC.md's order.
std::vector<std::string> changed_fields(const core::TaskDefinition& before, const core::TaskDefinition& after);

}  // namespace taskd::ops
