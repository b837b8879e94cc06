#pragma once
// backfill: a manual run for each planned slot of a past window.
#include <cstdint>
#include <string>
#include <vector>

#include "core/backfill.hpp"
#include "core/error.hpp"
#include "ops/json.hpp"
#include "store/database.hpp"

namespace taskd::ops {

struct BackfillArgs {
  std::string name;
  core::BackfillWindow window;
  bool dry_run = false;  // refuse what the queuing would refuse, write nothing
};

struct Backfilled {
  core::Task task;
  std::vector<core::Time> slots;        // oldest first
  std::vector<std::int64_t> run_ids;  // the run of each slot; none in a dry run
};
core::Result<Backfilled> backfill(store::Database& db, const BackfillArgs& args, core::Time now);
// {scheduled_at, run_id} per slot; run_id null in a dry run.
Json backfilled_json(const Backfilled& backfilled);

}  // namespace taskd::ops
