"""APScheduler 3's side of benchmark 6 (memory): its SQLAlchemy job store on
SQLite holding as many jobs as taskd's benchmark holds tasks.

  apscheduler_memory.py fill DATABASE COUNT
      writes COUNT jobs (a mix of interval and cron triggers, running
      /bin/true, planned from a day after now so none comes due) in one
      transaction, row for row what SQLAlchemyJobStore.add_job writes: the
      job's id, next_run_time and pickled __getstate__(). add_job itself
      commits once per job, too slow for a million.
  apscheduler_memory.py run DATABASE ACTIVE
      runs a BlockingScheduler on that store with ACTIVE more jobs running
      /bin/true every 10 s, spread over the interval as taskd spreads
      them, until SIGTERM; then prints how many jobs it executed.
"""
import pickle
import signal
import subprocess
import sys
from datetime import datetime, timedelta

from apscheduler.events import EVENT_JOB_EXECUTED
from apscheduler.job import Job
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger
from apscheduler.util import datetime_to_utc_timestamp
from pytz import utc

ROWS_PER_INSERT = 10000


def run_true():
    subprocess.run(["/bin/true"], check=False)


def scheduler_on(path):
    store = SQLAlchemyJobStore(url=f"sqlite:///{path}")
    return store, BlockingScheduler(timezone=utc, jobstores={"default": store})


def trigger_mix():
    """The schedules of bench/make_tasks.cpp: polls, nightly jobs, reports."""
    return [
        IntervalTrigger(hours=1, timezone=utc),
        CronTrigger.from_crontab("*/30 * * * *", timezone=utc),
        IntervalTrigger(hours=6, timezone=utc),
        CronTrigger.from_crontab("0 3 * * *", timezone="Europe/Berlin"),
        IntervalTrigger(days=1, timezone=utc),
        CronTrigger.from_crontab("15 4 * * mon", timezone="America/New_York"),
        IntervalTrigger(days=7, timezone=utc),
        CronTrigger.from_crontab("17 5 1 * *", timezone=utc),
    ]


def job_row(scheduler, store, job_id, trigger, plan_from):
    """What scheduler.add_job followed by store.add_job would insert."""
    job = Job(scheduler, id=job_id, func=run_true, trigger=trigger, executor="default", args=(), kwargs={},
              name=None, next_run_time=trigger.get_next_fire_time(None, plan_from), **scheduler._job_defaults)
    return {"id": job.id, "next_run_time": datetime_to_utc_timestamp(job.next_run_time),
            "job_state": pickle.dumps(job.__getstate__(), store.pickle_protocol)}


def fill(path, count):
    store, scheduler = scheduler_on(path)
    store.start(scheduler, "default")  # creates the table as the scheduler would
    triggers = trigger_mix()
    plan_from = datetime.now(utc) + timedelta(days=1)
    with store.engine.begin() as connection:
        rows = []
        for i in range(count):
            rows.append(job_row(scheduler, store, f"bench-{i:07}", triggers[i % len(triggers)], plan_from))
            if len(rows) == ROWS_PER_INSERT or i == count - 1:
                connection.execute(store.jobs_t.insert(), rows)
                rows = []


def run(path, active):
    _, scheduler = scheduler_on(path)
    now = datetime.now(utc)
    for i in range(active):
        start = now + timedelta(seconds=10 * i / active)
        scheduler.add_job(run_true, IntervalTrigger(seconds=10, start_date=start, timezone=utc),
                          id=f"active-{i:04}", replace_existing=True)
    executed = 0

    def count_executed(_event):
        nonlocal executed
        executed += 1

    def stop(*_):
        if not scheduler.running:
            sys.exit(0)  # not started yet: nothing to wait for
        scheduler.shutdown(wait=True)

    scheduler.add_listener(count_executed, EVENT_JOB_EXECUTED)
    signal.signal(signal.SIGTERM, stop)
    try:
        scheduler.start()
    finally:
        print(executed)


def main(argv):
    if len(argv) == 4 and argv[1] == "fill":
        fill(argv[2], int(argv[3]))
    elif len(argv) == 4 and argv[1] == "run":
        run(argv[2], int(argv[3]))
    else:
        sys.exit("usage: apscheduler_memory.py fill DATABASE COUNT | run DATABASE ACTIVE")


if __name__ == "__main__":
    main(sys.argv)
