/* The floor of `taskd list` and `taskd export` at scale (bench/scale.sh):
 * the same columns read with the sqlite3 C API, in the same order, and
 * printed with printf, one line per task (list) or a few key = value lines
 * per task (export). What taskd adds beyond this is its own cost.
 *
 * Usage: listing_floor DATABASE list|export */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

static const char *const list_sql =
    "SELECT name, schedule_kind, schedule_spec, tz, next_run_at, last_status, paused, disabled_until_update, "
    "command FROM tasks ORDER BY name";

static const char *const export_sql =
    "SELECT name, command, shell, schedule_kind, schedule_spec, tz, dtstart, after_finish, phase, jitter, timeout, "
    "kill_grace, tolerance, retry, permanent_exit, overlap, owner, group_name, priority, cwd, env, notify, keep_runs "
    "FROM tasks ORDER BY name";

static const char *text(sqlite3_stmt *row, int column) {
  const unsigned char *value = sqlite3_column_text(row, column);
  return value ? (const char *)value : "";
}

static void print_list_row(sqlite3_stmt *row) {
  printf("%-14s %s %s (%s)  %lld  %s  %s  %s\n", text(row, 0), text(row, 1), text(row, 2), text(row, 3),
         (long long)sqlite3_column_int64(row, 4), text(row, 5),
         sqlite3_column_int(row, 7) ? "disabled" : sqlite3_column_int(row, 6) ? "paused" : "active", text(row, 8));
}

static void print_export_row(sqlite3_stmt *row) {
  printf("\n[[task]]\n");
  for (int column = 0; column < sqlite3_column_count(row); ++column) {
    if (sqlite3_column_type(row, column) == SQLITE_NULL) continue;
    printf("%s = \"%s\"\n", sqlite3_column_name(row, column), text(row, column));
  }
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[2], "list") != 0 && strcmp(argv[2], "export") != 0)) {
    fputs("usage: listing_floor DATABASE list|export\n", stderr);
    return 2;
  }
  int listing = strcmp(argv[2], "list") == 0;
  sqlite3 *db = NULL;
  sqlite3_stmt *query = NULL;
  if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, listing ? list_sql : export_sql, -1, &query, NULL) != SQLITE_OK) {
    fprintf(stderr, "listing_floor: %s\n", sqlite3_errmsg(db));
    return 1;
  }
  while (sqlite3_step(query) == SQLITE_ROW) listing ? print_list_row(query) : print_export_row(query);
  sqlite3_finalize(query);
  sqlite3_close(db);
  return 0;
}
