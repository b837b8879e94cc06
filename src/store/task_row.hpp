#pragma once
// A row of the tasks table read as a task: the one place that reads it, and
// that tells a task taskd can run from a malformed row (a column that does
// not hold what its field needs: a list that does not parse, a schedule
// that does not, a time out of range). Only store/*.cpp include this.
#include <string>

#include "store/connection.hpp"
#include "store/tasks.hpp"

namespace taskd::store {

// `own` columns, then those of core::task_fields(), in their order.
std::string with_field_columns(std::string_view own);

// Every column of a task, in read_task's order: its own, then the table's.
const std::string& task_columns();
// How many columns task_columns names.
int task_column_count();

// The columns of a task that `list` shows, in read_headline's order.
extern const char* const headline_columns;

// The task in the current row of `row`, task_columns in order.
StoredTask read_task(const Query& row);

class Binder;
// A task's state columns as "column = ?" assignments, and their values
// bound in that order (`now` the row's updated_at).
extern const char* const state_assignments;
void bind_state(Binder& b, const core::TaskState& state, core::Time now);

// The task in the current row of `row`, headline_columns in order: the
// others keep their defaults. Only a column read that does not read by
// itself makes the row malformed here: whether the schedule's columns make
// a schedule (a spec that parses, a zone that is one) read_task alone asks,
// for a listing of a million names need not parse a million schedules.
StoredTask read_headline(const Query& row);

// The instant in column `i` of `row` (created_at), checked as read_task
// checks a task's times; the error says what is wrong with it.
core::Result<core::Time> read_instant(const Query& row, int i);

}  // namespace taskd::store
