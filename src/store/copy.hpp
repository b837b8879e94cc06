#pragma once
// `taskd copy-db`: the tasks of one database (their definitions and state),
// their runs and the group caps, copied into another, in either direction
// between a SQLite file and a PostgreSQL server.
#include <cstdint>

#include "core/error.hpp"
#include "store/database.hpp"

namespace taskd::store {

struct CopyCounts {
  std::int64_t tasks = 0;
  std::int64_t runs = 0;
  std::int64_t groups = 0;  // caps written; a cap the destination has already is not counted
  // Texts that were not UTF-8 (a SQLite file written by another program),
  // copied to a server with U+FFFD for each bad byte: it refuses them as they are.
  std::int64_t texts_repaired = 0;
};

// Copies everything of `from` into `to` in one transaction on `to`, while
// `from` is held still by its write lock (and written nothing). A source
// with a running run is refused (that run belongs to a taskd working on
// the source), and so is one with a malformed task row. A destination with
// tasks is refused unless `merge`; merging, a task name or a group with
// another cap found on both sides is refused, each listed. Into a destination without tasks, tasks and runs keep their
// ids (`logs --run ID` and TASKD_RUN_ID stay valid); merged, the destination
// numbers them. Every refusal is bad input and writes nothing.
core::Result<CopyCounts> copy_database(Database& from, Database& to, bool merge);

// Refuses (bad input) a source with a running run, naming its tasks, or
// with a malformed task row (see store::MalformedTask), naming them.
core::Result<void> check_copy_source(Database& from);

}  // namespace taskd::store
