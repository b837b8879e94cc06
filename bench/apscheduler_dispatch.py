#!/usr/bin/python3
"""APScheduler 3 doing the work of the dispatch benchmark (bench/dispatch.sh):
COUNT jobs in its SQLAlchemy job store on SQLite, all due at once, each
running /bin/true through subprocess, on a pool of 8 threads.

  apscheduler_dispatch.py prepare DB COUNT   store COUNT jobs due now in DB
  apscheduler_dispatch.py run DB COUNT       run them; exit once COUNT ended
"""
import subprocess
import sys
import threading
from datetime import datetime, timezone

from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_EXECUTED
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from sqlalchemy import create_engine, event


def scheduler(engine):
    # misfire_grace_time=None: a job runs however late, as taskd's do.
    return BackgroundScheduler(jobstores={"default": SQLAlchemyJobStore(engine=engine)},
                               executors={"default": ThreadPoolExecutor(8)},
                               job_defaults={"misfire_grace_time": None}, timezone=timezone.utc)


def prepare(db, count):
    # Only to store the jobs faster (each add_job commits on its own): the
    # measured run opens the file with SQLite's defaults.
    engine = create_engine(f"sqlite:///{db}")
    event.listen(engine, "connect", lambda connection, _: connection.execute("PRAGMA synchronous = OFF"))
    jobs = scheduler(engine)
    jobs.start(paused=True)  # jobs go to the store at once, and none runs
    due = datetime.now(timezone.utc)
    for i in range(count):
        jobs.add_job(subprocess.run, "date", run_date=due, args=[["/bin/true"]], kwargs={"check": True}, id=f"t{i}")
    # No shutdown(): it would let the scheduler's thread run the jobs; each
    # add_job has committed, and that thread is a daemon.


def run(db, count):
    lock = threading.Lock()
    all_ended = threading.Event()
    ended = failed = 0

    def on_end(event):
        nonlocal ended, failed
        with lock:
            ended += 1
            failed += event.exception is not None
            if ended == count:
                all_ended.set()

    jobs = scheduler(create_engine(f"sqlite:///{db}"))
    jobs.add_listener(on_end, EVENT_JOB_EXECUTED | EVENT_JOB_ERROR)
    jobs.start()
    all_ended.wait()
    jobs.shutdown()
    if failed:
        sys.exit(f"apscheduler_dispatch: {failed} of {count} jobs failed")


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("prepare", "run"):
        sys.exit(__doc__)
    {"prepare": prepare, "run": run}[sys.argv[1]](sys.argv[2], int(sys.argv[3]))
