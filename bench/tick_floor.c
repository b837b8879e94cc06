/* The floor of a tick (benchmark 1): a C program that opens a taskd database
 * and runs one indexed query, the one the tick starts with (due tasks on the
 * partial index tasks_due), and exits. Nothing taskd does can cost less.
 * Usage: tick_floor DATABASE; prints how many tasks are due now. */
#include <sqlite3.h>
#include <stdio.h>
#include <time.h>

static const char* const due_query =
    "SELECT count(*) FROM (SELECT id FROM tasks WHERE next_run_at IS NOT NULL AND paused = 0 "
    "AND disabled_until_update = 0 AND next_run_at <= ?1 ORDER BY next_run_at LIMIT 100)";

static sqlite3_int64 now_unix_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return (sqlite3_int64)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: tick_floor DATABASE\n");
    return 2;
  }
  sqlite3* db = NULL;
  sqlite3_stmt* query = NULL;
  if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, due_query, -1, &query, NULL) != SQLITE_OK ||
      sqlite3_bind_int64(query, 1, now_unix_ms()) != SQLITE_OK || sqlite3_step(query) != SQLITE_ROW) {
    fprintf(stderr, "tick_floor: %s: %s\n", argv[1], sqlite3_errmsg(db));
    sqlite3_close(db);
    return 1;
  }
  printf("%lld\n", (long long)sqlite3_column_int64(query, 0));
  sqlite3_finalize(query);
  sqlite3_close(db);
  return 0;
}
