-- taskd database schema: the only source of it, embedded into the binary.
-- Each "-- migrate: N" section brings a file at user_version N-1 to N; taskd
-- applies the sections above the file's version in order, in one transaction.
-- Times are Unix milliseconds (UTC); durations are seconds (a default phase
-- is stored with its milliseconds as a fraction, e.g. 37.137).

-- migrate: 1
-- The tasks and their runs.
CREATE TABLE tasks (
  id                    INTEGER PRIMARY KEY,
  name                  TEXT    NOT NULL UNIQUE,
  -- definition
  command               TEXT    NOT NULL,            -- JSON array of argv strings
  shell                 INTEGER NOT NULL DEFAULT 0,  -- 1: command[0] runs under /bin/sh -c
  schedule_kind         TEXT    NOT NULL CHECK (schedule_kind IN ('every', 'cron', 'rrule', 'manual')),
  schedule_spec         TEXT    NOT NULL,
  tz                    TEXT    NOT NULL DEFAULT '',  -- IANA zone of a cron or rrule schedule
  dtstart               TEXT,                        -- rrule: DTSTART as a wall time in tz
  after_finish          INTEGER NOT NULL DEFAULT 0,
  phase                 INTEGER NOT NULL DEFAULT 0,
  jitter                INTEGER NOT NULL DEFAULT 0,
  timeout               INTEGER,                     -- NULL: half the interval
  kill_grace            INTEGER NOT NULL DEFAULT 10,
  tolerance             INTEGER,                     -- NULL: 10 % of the interval
  retry                 TEXT    NOT NULL DEFAULT '[0,60,300,900,1800,3600]',
  permanent_exit        TEXT    NOT NULL DEFAULT '[78]',
  overlap               TEXT    NOT NULL DEFAULT 'skip' CHECK (overlap IN ('skip', 'queue', 'replace')),
  owner                 TEXT    NOT NULL DEFAULT '',
  group_name            TEXT    NOT NULL DEFAULT '',
  priority              INTEGER NOT NULL DEFAULT 0,
  cwd                   TEXT    NOT NULL DEFAULT '',
  env                   TEXT    NOT NULL DEFAULT '[]', -- JSON array of [name, value]
  -- state
  next_run_at           INTEGER,
  last_run_at           INTEGER,
  last_finished_at      INTEGER,
  last_status           TEXT,
  attempt_no            INTEGER NOT NULL DEFAULT 0,
  attempt_uid           TEXT    NOT NULL DEFAULT '',
  attempt_started_at    INTEGER,
  attempt_timeout_at    INTEGER,
  run_index             INTEGER NOT NULL DEFAULT 0,
  disabled_until_update INTEGER NOT NULL DEFAULT 0,
  disabled_reason       TEXT    NOT NULL DEFAULT '',
  paused                INTEGER NOT NULL DEFAULT 0,
  accounted_until       INTEGER,
  state_blob            BLOB    NOT NULL DEFAULT x'', -- the child's $TASKD_STATE file, kept between runs
  created_at            INTEGER NOT NULL,
  updated_at            INTEGER NOT NULL
);

-- The tick reads only the tasks that can be due: O(due + log n).
CREATE INDEX tasks_due ON tasks (next_run_at)
  WHERE next_run_at IS NOT NULL AND paused = 0 AND disabled_until_update = 0;
CREATE INDEX tasks_owner ON tasks (owner) WHERE owner <> '';
CREATE INDEX tasks_group ON tasks (group_name) WHERE group_name <> '';

CREATE TABLE runs (
  id                INTEGER PRIMARY KEY,
  task_id           INTEGER NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  status            TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed',
                                                       'timed_out', 'dropped', 'skipped', 'lost')),
  trigger           TEXT    NOT NULL CHECK (trigger IN ('schedule', 'retry', 'manual')),
  priority          INTEGER NOT NULL DEFAULT 0,
  scheduled_at      INTEGER NOT NULL,
  enqueued_at       INTEGER NOT NULL,
  not_before        INTEGER NOT NULL,                -- the slot plus its jitter: not claimed before
  started_at        INTEGER,
  finished_at       INTEGER,
  deadline_at       INTEGER,
  exit_code         INTEGER,
  signal            INTEGER,
  attempt_no        INTEGER NOT NULL DEFAULT 0,
  attempt_uid       TEXT    NOT NULL DEFAULT '',
  run_index         INTEGER NOT NULL DEFAULT 0,
  reason            TEXT    NOT NULL DEFAULT '',
  output            BLOB    NOT NULL DEFAULT x'',
  output_truncated  INTEGER NOT NULL DEFAULT 0,
  worker_host       TEXT    NOT NULL DEFAULT '',
  worker_pid        INTEGER,
  worker_boot_id    TEXT    NOT NULL DEFAULT '',       -- with the pid and start time: one process, ever
  worker_started_at INTEGER,                         -- the worker process's start time, to tell pid reuse
  child_pid         INTEGER,                         -- also the child's process group
  child_started_at  INTEGER,
  lease_expires_at  INTEGER
);

CREATE INDEX runs_task ON runs (task_id, id);
-- Runs not yet finished, by task: the overlap check and the recovery scan.
CREATE INDEX runs_active ON runs (task_id) WHERE status IN ('queued', 'running');
-- Runs in flight: the recovery scan.
CREATE INDEX runs_running ON runs (id) WHERE status = 'running';
-- The claim order: priority first, then first come first served.
CREATE INDEX runs_queue ON runs (priority DESC, enqueued_at, id) WHERE status = 'queued';

-- migrate: 2
-- Groups with a cap on how many of their runs may run at once, across every
-- taskd process on this file. A group without a row has no cap.
CREATE TABLE groups (
  name        TEXT    PRIMARY KEY,
  concurrency INTEGER CHECK (concurrency IS NULL OR concurrency >= 1),  -- NULL: no cap
  updated_at  INTEGER NOT NULL
);
-- The worker's wake-up: the earliest not_before among queued runs.
CREATE INDEX runs_claimable ON runs (not_before) WHERE status = 'queued';

-- migrate: 3
-- The taskd processes running the loop on this file (`run`, `work`), busy or
-- idle: `status` lists them. A loop adds its row when it starts, refreshes
-- heartbeat_at while it runs and deletes the row when it ends; the row of a
-- process that died is deleted by whoever finds it dead.
CREATE TABLE workers (
  id            INTEGER PRIMARY KEY,
  role          TEXT    NOT NULL CHECK (role IN ('run', 'work')),
  host          TEXT    NOT NULL,
  pid           INTEGER NOT NULL,
  boot_id       TEXT    NOT NULL,
  process_start INTEGER NOT NULL,                  -- clock ticks after boot, as runs.worker_started_at
  concurrency   INTEGER NOT NULL,
  started_at    INTEGER NOT NULL,
  heartbeat_at  INTEGER NOT NULL
);
-- A command run by /bin/sh -c when the task changes state (failed,
-- recovered, disabled), with the facts in TASKD_NOTIFY_* variables.
ALTER TABLE tasks ADD COLUMN notify TEXT NOT NULL DEFAULT '';

-- migrate: 4
-- How many finished runs the history keeps of the task (`--keep-runs`).
ALTER TABLE tasks ADD COLUMN keep_runs INTEGER NOT NULL DEFAULT 1000 CHECK (keep_runs >= 1);

-- `list --state`: each state the partial index of its own few rows. (Lists
-- of values are written out as comparisons in the index conditions and the
-- triggers: SQLite builds a temporary table for every IN list it evaluates,
-- at every write of a task or a run.)
CREATE INDEX tasks_paused ON tasks (name) WHERE paused = 1;
CREATE INDEX tasks_disabled ON tasks (name) WHERE disabled_until_update = 1;
CREATE INDEX tasks_failing ON tasks (name)
  WHERE last_status = 'failed' OR last_status = 'timed_out' OR last_status = 'lost';
-- `history --status`, `--trigger`, `--since`/`--until`, and `--keep-days`,
-- which deletes the oldest slots first. The two partial indexes hold the
-- rare runs only (a run enters runs_unusual once, when it ends other than
-- succeeded; queued and running runs have their own): most runs are
-- scheduled and succeed, and history finds those reading backwards in id
-- order. The claim and the start write none of the three.
CREATE INDEX runs_unusual ON runs (status, id)
  WHERE status <> 'succeeded' AND status <> 'queued' AND status <> 'running';
CREATE INDEX runs_unscheduled ON runs (trigger, id) WHERE trigger <> 'schedule';
CREATE INDEX runs_slot ON runs (scheduled_at);

-- Counters for `metrics` and `status`, kept by the triggers below in the
-- transaction that ends a run, so that neither reads the history.
-- Runs that ended, by status: counted once, never lowered by pruning.
CREATE TABLE run_totals (
  status TEXT    PRIMARY KEY,
  runs   INTEGER NOT NULL
) WITHOUT ROWID;
-- Started minus scheduled of the scheduled runs that started and ended: each
-- counted in the first bucket whose bound le_ms it does not pass (the last
-- bound is +Inf); `metrics` adds them up into Prometheus' cumulative buckets.
CREATE TABLE lateness_buckets (
  le_ms INTEGER PRIMARY KEY,
  runs  INTEGER NOT NULL DEFAULT 0
);
INSERT INTO lateness_buckets (le_ms) VALUES (5), (10), (20), (50), (100), (250), (500), (1000), (2500), (5000),
  (10000), (30000), (60000), (300000), (9223372036854775807);
-- One row: the sum of the lateness histogram, and the size of the history
-- (its ended runs and their captured output), which pruning lowers.
CREATE TABLE history_totals (
  id              INTEGER PRIMARY KEY CHECK (id = 1),
  lateness_sum_ms INTEGER NOT NULL,
  runs            INTEGER NOT NULL,
  output_bytes    INTEGER NOT NULL
);

-- Brought up to date from the history a file already has.
INSERT INTO run_totals (status, runs)
  SELECT status, count(*) FROM runs WHERE status NOT IN ('queued', 'running') GROUP BY status;
UPDATE lateness_buckets SET runs = (
  SELECT count(*) FROM runs WHERE trigger = 'schedule' AND started_at IS NOT NULL AND status NOT IN ('queued', 'running')
    AND lateness_buckets.le_ms = (SELECT min(b.le_ms) FROM lateness_buckets b WHERE b.le_ms >= started_at - scheduled_at));
INSERT INTO history_totals (id, lateness_sum_ms, runs, output_bytes)
  SELECT 1, coalesce(sum(CASE WHEN trigger = 'schedule' THEN started_at - scheduled_at END), 0), count(*),
         coalesce(sum(length(output)), 0)
  FROM runs WHERE status NOT IN ('queued', 'running');

-- A run is counted once, when it ends: a queued or running run that ends, or
-- a row written ended (SKIPPED, or a history copied in). Both write a row
-- into run_ends, whose trigger counts it. Output is written only as a run ends.
CREATE VIEW run_ends (status, late_ms, output_bytes) AS SELECT NULL, NULL, NULL;
CREATE TRIGGER run_ends_count INSTEAD OF INSERT ON run_ends
BEGIN
  INSERT INTO run_totals (status, runs) VALUES (NEW.status, 1) ON CONFLICT (status) DO UPDATE SET runs = runs + 1;
  UPDATE lateness_buckets SET runs = runs + 1 WHERE NEW.late_ms IS NOT NULL
    AND le_ms = (SELECT min(le_ms) FROM lateness_buckets WHERE le_ms >= NEW.late_ms);
  UPDATE history_totals SET runs = runs + 1, output_bytes = output_bytes + NEW.output_bytes,
    lateness_sum_ms = lateness_sum_ms + coalesce(NEW.late_ms, 0);
END;
CREATE TRIGGER runs_count_end AFTER UPDATE OF status ON runs
  WHEN (OLD.status = 'queued' OR OLD.status = 'running') AND NEW.status <> 'queued' AND NEW.status <> 'running'
BEGIN
  INSERT INTO run_ends VALUES (NEW.status, CASE WHEN NEW.trigger = 'schedule' THEN NEW.started_at - NEW.scheduled_at END,
                               length(NEW.output));
END;
CREATE TRIGGER runs_count_insert AFTER INSERT ON runs WHEN NEW.status <> 'queued' AND NEW.status <> 'running'
BEGIN
  INSERT INTO run_ends VALUES (NEW.status, CASE WHEN NEW.trigger = 'schedule' THEN NEW.started_at - NEW.scheduled_at END,
                               length(NEW.output));
END;
CREATE TRIGGER runs_count_delete AFTER DELETE ON runs WHEN OLD.status <> 'queued' AND OLD.status <> 'running'
BEGIN
  UPDATE history_totals SET runs = runs - 1, output_bytes = output_bytes - length(OLD.output);
END;

-- migrate: 5
-- The host whose taskd (its --host-id) alone runs the task; '': any host.
ALTER TABLE tasks ADD COLUMN on_host TEXT NOT NULL DEFAULT '';
-- /etc/machine-id of a worker's machine: a second machine under a host name
-- that a live worker of another machine has is refused.
ALTER TABLE workers ADD COLUMN machine_id TEXT NOT NULL DEFAULT '';

-- migrate: 6
-- A worker's clock minus the database's, in milliseconds, as it last
-- measured it (0 on a SQLite file: one clock).
ALTER TABLE workers ADD COLUMN clock_offset_ms INTEGER NOT NULL DEFAULT 0;
-- Why a running run was asked to stop by a host that cannot stop it itself
-- (overlap=replace on another host's run); its worker ends it at its next
-- lease renewal. '': not asked.
ALTER TABLE runs ADD COLUMN stop_reason TEXT NOT NULL DEFAULT '';

-- migrate: 7
-- How a worker keeps a run's descendants with it (taskd(1), CONTAINMENT):
-- 'cgroup PATH' (the cgroup of its runs' cgroups) or 'subreaper (WHY)'.
ALTER TABLE workers ADD COLUMN containment TEXT NOT NULL DEFAULT '';
-- What an attempt that ran used: its CPU time (user and system, in
-- microseconds) and the most memory in use at once (bytes), from its cgroup
-- or else from wait4 (taskd(1), CONTAINMENT); NULL for a run that never ran.
ALTER TABLE runs ADD COLUMN cpu_us INTEGER;
ALTER TABLE runs ADD COLUMN peak_memory_bytes INTEGER;

-- migrate: 8
-- A task's limits on each of its runs' cgroups (taskd(1), Containment):
-- memory.max in bytes, cpu.weight, pids.max; NULL: no limit (cpu.weight:
-- the default, 100). A run that cannot have them fails.
ALTER TABLE tasks ADD COLUMN memory_max INTEGER CHECK (memory_max >= 1);
ALTER TABLE tasks ADD COLUMN cpu_weight INTEGER CHECK (cpu_weight BETWEEN 1 AND 10000);
ALTER TABLE tasks ADD COLUMN tasks_max INTEGER CHECK (tasks_max BETWEEN 1 AND 4194304);

-- migrate: 9
-- `taskd check` (taskd(1)): CRITICAL when no run of the task succeeded for
-- alert_after seconds (NULL: never), counted from last_succeeded_at (the end
-- of its last successful run), else from created_at. A file from before
-- this migration takes its last success from the history it kept.
ALTER TABLE tasks ADD COLUMN alert_after INTEGER CHECK (alert_after >= 1);
ALTER TABLE tasks ADD COLUMN last_succeeded_at INTEGER;
UPDATE tasks SET last_succeeded_at =
  (SELECT max(finished_at) FROM runs WHERE runs.task_id = tasks.id AND runs.status = 'succeeded');

-- migrate: 10
-- What a tick does with the slots that came due while no scheduler ran
-- (taskd(1), --catch-up): latest, none, all or all:N; and the window in
-- seconds beyond which a missed slot is skipped, NULL: none.
ALTER TABLE tasks ADD COLUMN catch_up TEXT NOT NULL DEFAULT 'latest'
  CHECK (catch_up IN ('latest', 'none', 'all') OR catch_up GLOB 'all:[1-9]*');
ALTER TABLE tasks ADD COLUMN catch_up_window INTEGER CHECK (catch_up_window >= 0);

-- migrate: 11
-- Chains (taskd(1), --after): the task whose run's final outcome starts
-- this one ('': none), on its success only or (after_finished 1) on any
-- final outcome; and, in a run, the run of that task that queued it (NULL:
-- none did).
ALTER TABLE tasks ADD COLUMN after_task TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN after_finished INTEGER NOT NULL DEFAULT 0 CHECK (after_finished IN (0, 1));
CREATE INDEX tasks_after ON tasks (after_task) WHERE after_task <> '';
ALTER TABLE runs ADD COLUMN upstream_run_id INTEGER;

-- migrate: 12
-- What a task's wall-clock schedule does at DST changes (taskd(1),
-- --dst-gap, --dst-repeat): with a wall time the clock skips, run-after or
-- skip; with one it shows twice, once or twice. NULL: the schedule's default
-- (cronie's rules, RFC 5545's for an RRULE).
ALTER TABLE tasks ADD COLUMN dst_gap TEXT CHECK (dst_gap IN ('run-after', 'skip'));
ALTER TABLE tasks ADD COLUMN dst_repeat TEXT CHECK (dst_repeat IN ('once', 'twice'));

-- migrate: 13
-- When a task's retry ladder runs out (taskd(1), --disable-when-exhausted):
-- 1, it is disabled until the next update; 0, the default, it goes on with
-- its next planned slot. Its failing streak: when the first failed attempt
-- after its last success ended, and when its ladder first ran out in that
-- streak (NULL: not failing; it has not). A failing task of a file from
-- before this migration takes the start of its streak from the history it
-- kept, else from its last attempt.
ALTER TABLE tasks ADD COLUMN disable_when_exhausted INTEGER NOT NULL DEFAULT 0
  CHECK (disable_when_exhausted IN (0, 1));
ALTER TABLE tasks ADD COLUMN failing_since INTEGER;
ALTER TABLE tasks ADD COLUMN ladder_exhausted_at INTEGER;
UPDATE tasks SET failing_since = coalesce(
    (SELECT min(finished_at) FROM runs WHERE runs.task_id = tasks.id
       AND runs.status IN ('failed', 'timed_out', 'lost')
       AND (tasks.last_succeeded_at IS NULL OR runs.finished_at > tasks.last_succeeded_at)),
    last_finished_at)
  WHERE last_status IN ('failed', 'timed_out', 'lost');

-- migrate: 14
-- The ticks of taskd run-once, a scheduler that cron calls and that keeps no
-- worker row: per host, when its last tick began, and about how often it
-- ticks (milliseconds, a moving average; NULL after its first tick), so
-- that status, check, metrics and explain see it as a scheduler.
CREATE TABLE ticks (
  host     TEXT    PRIMARY KEY,
  last_at  INTEGER NOT NULL,
  every_ms INTEGER
);

-- migrate: 15
-- The bytes of output each run of a task keeps (taskd(1), --keep-output):
-- the head and the tail of what it wrote, with a line saying how much was
-- cut between them. A task from before this migration keeps 1 MiB.
ALTER TABLE tasks ADD COLUMN keep_output INTEGER NOT NULL DEFAULT 1048576
  CHECK (keep_output BETWEEN 0 AND 536870912);
-- migrate: 16
-- Whom each run of a task runs as (taskd(1), --user): "NAME" or
-- "NAME:GROUP"; '' (every task from before this migration) for the
-- scheduler's own user.
ALTER TABLE tasks ADD COLUMN run_as TEXT NOT NULL DEFAULT '';
-- migrate: 17
-- A task's --env-file (taskd(1)): the absolute path of a file of
-- NAME=VALUE lines each run reads as it starts; '' for none. The values
-- stay in that file, never in the database.
ALTER TABLE tasks ADD COLUMN env_file TEXT NOT NULL DEFAULT '';
-- The boot of the machine (its kernel's boot id) under which a task of
-- --cron @reboot last ran or was added; a tick under another boot runs it
-- once and writes its own. '' for none yet: the first tick of its host
-- writes its boot without running it.
ALTER TABLE tasks ADD COLUMN boot_id TEXT NOT NULL DEFAULT '';
CREATE INDEX tasks_at_boot ON tasks(on_host, boot_id)
  WHERE schedule_kind = 'cron' AND schedule_spec = '@reboot';
-- migrate: 18
-- Where a task's alerts go (taskd(1), --mail-to, --ping-url,
-- --notify-url): the addresses mailed through sendmail and the URL posted
-- on the changes --notify is told of, and the URL pinged at each run's
-- start and end; '' (every task from before this migration) for none. What
-- --notify-url posts: 'json' or 'slack'.
ALTER TABLE tasks ADD COLUMN mail_to TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN ping_url TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN notify_url TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN notify_format TEXT NOT NULL DEFAULT 'json'
  CHECK (notify_format IN ('json', 'slack'));
-- migrate: 19
-- The database's defaults (taskd(1), taskd defaults): a value, as its
-- option's text, for each field that has one set. Every host of a shared
-- database uses the same.
CREATE TABLE defaults (
  field TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
-- The fields each task takes from the defaults, comma-separated, whose
-- values its columns keep up to date. A task from before this migration
-- takes those it left at taskd's own value (its zone it keeps).
ALTER TABLE tasks ADD COLUMN from_defaults TEXT NOT NULL DEFAULT '';
UPDATE tasks SET from_defaults = trim(
  CASE WHEN mail_to = '' THEN 'mail_to,' ELSE '' END ||
  CASE WHEN notify_url = '' THEN 'notify_url,' ELSE '' END ||
  CASE WHEN notify_format = 'json' THEN 'notify_format,' ELSE '' END ||
  CASE WHEN notify = '' THEN 'notify,' ELSE '' END ||
  CASE WHEN retry = '[0,60,300,900,1800,3600]' THEN 'retry,' ELSE '' END ||
  CASE WHEN timeout IS NULL THEN 'timeout,' ELSE '' END ||
  CASE WHEN keep_runs = 1000 THEN 'keep_runs,' ELSE '' END, ',');
-- migrate: 20
-- Whom each scheduler runs as (effective uid; NULL: a taskd from before
-- this migration), so that add --user can warn when none of them is root.
ALTER TABLE workers ADD COLUMN uid INTEGER;
ALTER TABLE ticks ADD COLUMN uid INTEGER;
-- migrate: 21
-- --rdate and --exdate: slots added to a task's schedule and taken from it,
-- comma-separated as their options take them.
ALTER TABLE tasks ADD COLUMN rdate TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN exdate TEXT NOT NULL DEFAULT '';
-- migrate: 22
-- Calendars (taskd calendar): named sets of days, each line of `dates` a
-- day and its name ("2026-12-25 Christmas Day"), sorted; `days`, `first_day`
-- and `last_day` are what `calendar list` shows.
CREATE TABLE calendars (
  name       TEXT    PRIMARY KEY,
  dates      TEXT    NOT NULL,
  days       INTEGER NOT NULL,
  first_day  TEXT    NOT NULL DEFAULT '',
  last_day   TEXT    NOT NULL DEFAULT '',
  updated_at INTEGER NOT NULL
);
-- --skip-calendar and --only-calendar: calendars by name (comma-separated),
-- and `calendar_days` their days as the task was last written ("skip DAYS"
-- and "only DAYS" lines), so that the schedule reads the row alone.
ALTER TABLE tasks ADD COLUMN skip_calendar TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN only_calendar TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN calendar_days TEXT NOT NULL DEFAULT '';
-- migrate: 23
-- The days of tasks' calendars in a table of their own, once each, named by
-- their SHA-256 in hex: a task row is rewritten at each claim and end of its
-- runs and must not carry 100 kB of days each time. A task row holds the
-- name in calendar_days_digest ('' for none). taskd_sha256 is taskd's own
-- SQL function, there for this step.
CREATE TABLE calendar_day_sets (
  digest TEXT PRIMARY KEY,
  days   TEXT NOT NULL
);
INSERT OR IGNORE INTO calendar_day_sets (digest, days)
  SELECT taskd_sha256(calendar_days), calendar_days FROM tasks WHERE calendar_days <> '';
ALTER TABLE tasks ADD COLUMN calendar_days_digest TEXT NOT NULL DEFAULT '';
UPDATE tasks SET calendar_days_digest = taskd_sha256(calendar_days) WHERE calendar_days <> '';
ALTER TABLE tasks DROP COLUMN calendar_days;
CREATE INDEX tasks_by_calendar_days ON tasks (calendar_days_digest) WHERE calendar_days_digest <> '';
-- migrate: 24
-- Each task's counters for the per-task series of `metrics`: its runs that
-- ended, by status, and the lateness of its scheduled runs as a histogram
-- (runs at most 0.1 s, 0.5 s, 1 s, 5 s, 30 s, 1 min and 5 min late, all of
-- them, and the sum), counted by the trigger that counts the totals and, as
-- those, never lowered by pruning; and the end and length of its last run
-- that started and ended. A row per task and shard (always 0 here; a
-- server's transactions add to shards of their own). remove_task deletes a
-- task's rows.
CREATE TABLE task_run_stats (
  task_id     INTEGER NOT NULL,
  shard       INTEGER NOT NULL DEFAULT 0,
  succeeded   INTEGER NOT NULL DEFAULT 0,
  failed      INTEGER NOT NULL DEFAULT 0,
  timed_out   INTEGER NOT NULL DEFAULT 0,
  dropped     INTEGER NOT NULL DEFAULT 0,
  skipped     INTEGER NOT NULL DEFAULT 0,
  lost        INTEGER NOT NULL DEFAULT 0,
  late_100ms  INTEGER NOT NULL DEFAULT 0,
  late_500ms  INTEGER NOT NULL DEFAULT 0,
  late_1s     INTEGER NOT NULL DEFAULT 0,
  late_5s     INTEGER NOT NULL DEFAULT 0,
  late_30s    INTEGER NOT NULL DEFAULT 0,
  late_1m     INTEGER NOT NULL DEFAULT 0,
  late_5m     INTEGER NOT NULL DEFAULT 0,
  late_count  INTEGER NOT NULL DEFAULT 0,
  late_sum_ms INTEGER NOT NULL DEFAULT 0,
  last_finished_at INTEGER,
  last_duration_ms INTEGER,
  PRIMARY KEY (task_id, shard)
) WITHOUT ROWID;
-- list --on-host and the board's host filter: the pinned tasks only.
CREATE INDEX tasks_on_host ON tasks (on_host) WHERE on_host <> '';
-- The run_ends row names its task now.
DROP TRIGGER runs_count_end;
DROP TRIGGER runs_count_insert;
DROP TRIGGER run_ends_count;
DROP VIEW run_ends;
CREATE VIEW run_ends (task_id, status, late_ms, output_bytes, finished_at, duration_ms) AS
  SELECT NULL, NULL, NULL, NULL, NULL, NULL;
CREATE TRIGGER run_ends_count INSTEAD OF INSERT ON run_ends
BEGIN
  INSERT INTO run_totals (status, runs) VALUES (NEW.status, 1) ON CONFLICT (status) DO UPDATE SET runs = runs + 1;
  UPDATE lateness_buckets SET runs = runs + 1 WHERE NEW.late_ms IS NOT NULL
    AND le_ms = (SELECT min(le_ms) FROM lateness_buckets WHERE le_ms >= NEW.late_ms);
  UPDATE history_totals SET runs = runs + 1, output_bytes = output_bytes + NEW.output_bytes,
    lateness_sum_ms = lateness_sum_ms + coalesce(NEW.late_ms, 0);
  INSERT INTO task_run_stats (task_id, succeeded, failed, timed_out, dropped, skipped, lost, late_100ms, late_500ms,
                              late_1s, late_5s, late_30s, late_1m, late_5m, late_count, late_sum_ms,
                              last_finished_at, last_duration_ms)
    VALUES (NEW.task_id, NEW.status = 'succeeded', NEW.status = 'failed', NEW.status = 'timed_out',
            NEW.status = 'dropped', NEW.status = 'skipped', NEW.status = 'lost', coalesce(NEW.late_ms <= 100, 0),
            coalesce(NEW.late_ms <= 500, 0), coalesce(NEW.late_ms <= 1000, 0), coalesce(NEW.late_ms <= 5000, 0),
            coalesce(NEW.late_ms <= 30000, 0), coalesce(NEW.late_ms <= 60000, 0), coalesce(NEW.late_ms <= 300000, 0),
            NEW.late_ms IS NOT NULL, coalesce(NEW.late_ms, 0),
            CASE WHEN NEW.duration_ms IS NOT NULL THEN NEW.finished_at END, NEW.duration_ms)
    ON CONFLICT (task_id, shard) DO UPDATE SET succeeded = succeeded + excluded.succeeded,
      failed = failed + excluded.failed, timed_out = timed_out + excluded.timed_out,
      dropped = dropped + excluded.dropped, skipped = skipped + excluded.skipped, lost = lost + excluded.lost,
      late_100ms = late_100ms + excluded.late_100ms, late_500ms = late_500ms + excluded.late_500ms,
      late_1s = late_1s + excluded.late_1s, late_5s = late_5s + excluded.late_5s,
      late_30s = late_30s + excluded.late_30s, late_1m = late_1m + excluded.late_1m,
      late_5m = late_5m + excluded.late_5m, late_count = late_count + excluded.late_count,
      late_sum_ms = late_sum_ms + excluded.late_sum_ms,
      last_finished_at = CASE WHEN excluded.last_finished_at >= coalesce(last_finished_at, excluded.last_finished_at)
                         THEN excluded.last_finished_at ELSE last_finished_at END,
      last_duration_ms = CASE WHEN excluded.last_finished_at >= coalesce(last_finished_at, excluded.last_finished_at)
                         THEN excluded.last_duration_ms ELSE last_duration_ms END;
END;
CREATE TRIGGER runs_count_end AFTER UPDATE OF status ON runs
  WHEN (OLD.status = 'queued' OR OLD.status = 'running') AND NEW.status <> 'queued' AND NEW.status <> 'running'
BEGIN
  INSERT INTO run_ends VALUES (NEW.task_id, NEW.status,
                               CASE WHEN NEW.trigger = 'schedule' THEN NEW.started_at - NEW.scheduled_at END,
                               length(NEW.output), NEW.finished_at, NEW.finished_at - NEW.started_at);
END;
CREATE TRIGGER runs_count_insert AFTER INSERT ON runs WHEN NEW.status <> 'queued' AND NEW.status <> 'running'
BEGIN
  INSERT INTO run_ends VALUES (NEW.task_id, NEW.status,
                               CASE WHEN NEW.trigger = 'schedule' THEN NEW.started_at - NEW.scheduled_at END,
                               length(NEW.output), NEW.finished_at, NEW.finished_at - NEW.started_at);
END;
-- Brought up to date from the history a file already has.
INSERT INTO task_run_stats (task_id, succeeded, failed, timed_out, dropped, skipped, lost, late_100ms, late_500ms,
                            late_1s, late_5s, late_30s, late_1m, late_5m, late_count, late_sum_ms, last_finished_at,
                            last_duration_ms)
  SELECT counted.*, last.finished_at, last.finished_at - last.started_at
  FROM (SELECT task_id, sum(status = 'succeeded'), sum(status = 'failed'), sum(status = 'timed_out'),
               sum(status = 'dropped'), sum(status = 'skipped'), sum(status = 'lost'), coalesce(sum(late <= 100), 0),
               coalesce(sum(late <= 500), 0), coalesce(sum(late <= 1000), 0), coalesce(sum(late <= 5000), 0),
               coalesce(sum(late <= 30000), 0), coalesce(sum(late <= 60000), 0), coalesce(sum(late <= 300000), 0),
               count(late), coalesce(sum(late), 0)
        FROM (SELECT task_id, status, CASE WHEN trigger = 'schedule' THEN started_at - scheduled_at END AS late
              FROM runs WHERE status NOT IN ('queued', 'running'))
        GROUP BY task_id) counted
  LEFT JOIN runs last ON last.id = (SELECT id FROM runs WHERE task_id = counted.task_id AND started_at IS NOT NULL
                                    AND finished_at IS NOT NULL ORDER BY finished_at DESC, id DESC LIMIT 1);
