#pragma once
// `--keep-days`: finished runs whose slot is older than the retention go,
// oldest first, a batch per short write transaction, so that a large
// backlog never holds the write lock for long. Counters kept by the schema
// (metrics' *_total) are not lowered by it.
#include <optional>

#include "core/duration.hpp"
#include "core/time.hpp"
#include "store/database.hpp"

namespace taskd::sched {

struct Retention {
  core::Seconds keep;  // runs whose slot is older than now - keep go
  int batch = 1000;    // runs deleted per transaction
};

// Deletes one batch of expired runs; how many (a full batch: more may be
// left). When none has expired it reads one index entry and takes no write
// lock.
core::Result<int> prune_expired_batch(store::Database& db, core::Time now, const Retention& retention);

// Deletes every expired run, batch after batch; how many.
core::Result<std::int64_t> prune_expired(store::Database& db, core::Time now, const Retention& retention);

}  // namespace taskd::sched
