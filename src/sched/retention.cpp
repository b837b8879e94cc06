#include "sched/retention.hpp"

#include "store/runs.hpp"

namespace taskd::sched {

core::Result<int> prune_expired_batch(store::Database& db, core::Time now, const Retention& retention) {
  auto cutoff = now - retention.keep;
  auto expired = TRY(store::has_runs_before(db, cutoff));
  if (!expired) return 0;
  return store::write(db, [&]() { return store::prune_runs_before(db, cutoff, retention.batch); });
}

core::Result<std::int64_t> prune_expired(store::Database& db, core::Time now, const Retention& retention) {
  std::int64_t total = 0;
  while (true) {
    auto deleted = TRY(prune_expired_batch(db, now, retention));
    total += deleted;
    if (deleted < retention.batch) return total;
  }
}

}  // namespace taskd::sched
