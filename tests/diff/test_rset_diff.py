"""taskd's recurrence sets (--rrule's iCalendar form: DTSTART, RRULE, RDATE,
EXDATE) against python-dateutil's rruleset, as rrulestr(text, forceset=True)
reads the same text.

Random sets: a DTSTART (a wall time) in one of several zones, a rule of a few
parts, RDATE times (some on the rule's occurrences, some between them) and
EXDATE times (mostly on occurrences, some on RDATE times, some on nothing),
the names in random case and the dates over one or two lines. dateutil works
in naive wall times: its occurrences become instants as in
test_rrule_diff.py (zoneinfo, fold=0: RFC 5545's reading, which taskd applies
to RDATE and EXDATE times too). The first occurrences after DTSTART must agree.

EXDATE days (VALUE=DATE) are left out of the random sets: dateutil reads one
as its midnight alone, taskd as the whole day, as RFC 5545 means it (the CLI
tests cover them). RFC 5545's RDATE and EXDATE examples (3.8.5.1, 3.8.5.2)
are fixed cases, with times in UTC and in a TZID.

All queries go to one schedule_driver process (SCHEDULE_DRIVER).
"""

import os
import random
import subprocess
import unittest
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from dateutil.rrule import rrulestr

SEED = 20261127
SETS = 1500
OCCURRENCES = 40
ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Asia/Tokyo"]
WEEKDAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]


def ical(wall):
    return wall.strftime("%Y%m%dT%H%M%S")


def rfc3339(instant):
    return instant.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def to_utc(wall, zone):
    return wall.replace(tzinfo=ZoneInfo(zone), fold=0).astimezone(timezone.utc) if wall.tzinfo is None else wall


def increasing(instants, after, count):
    found = []
    for instant in instants:
        if instant > after and (not found or instant > found[-1]):
            found.append(instant)
            if len(found) == count:
                break
    return [rfc3339(instant) for instant in found]


def random_rule(rng):
    freq = rng.choice(["HOURLY", "DAILY", "DAILY", "WEEKLY", "MONTHLY"])
    parts = [f"FREQ={freq}", f"INTERVAL={rng.randint(1, 3)}"]
    if freq != "HOURLY" and rng.random() < 0.4:
        parts.append("BYHOUR=" + ",".join(str(h) for h in sorted(rng.sample(range(24), rng.randint(1, 3)))))
    if freq == "WEEKLY" and rng.random() < 0.5:
        parts.append("BYDAY=" + ",".join(rng.sample(WEEKDAYS, rng.randint(1, 3))))
    if rng.random() < 0.5:
        parts.append(f"COUNT={rng.randint(3, 30)}")
    return ";".join(parts)


def spelled(rng, name):
    return "".join(c.lower() if rng.random() < 0.3 else c for c in name)


def date_lines(rng, name, walls):
    if not walls:
        return []
    split = rng.randint(1, len(walls))
    chunks = [walls[:split], walls[split:]] if rng.random() < 0.4 else [walls]
    return [f"{spelled(rng, name)}:{','.join(ical(w) for w in chunk)}" for chunk in chunks if chunk]


class Case:
    def __init__(self, rng):
        self.zone = rng.choice(ZONES)
        self.dtstart = datetime(rng.randint(2000, 2040), rng.randint(1, 12), rng.randint(1, 28),
                                rng.randint(0, 23), rng.choice([0, 15, 30, 45]))
        rule = random_rule(rng)
        own = list(rrulestr(rule, dtstart=self.dtstart).xafter(self.dtstart - timedelta(seconds=1), count=60,
                                                                  inc=True))
        span = max((own[-1] - self.dtstart).total_seconds(), 86400) if own else 86400
        def some_time():
            return self.dtstart + timedelta(minutes=15 * rng.randint(0, int(span // 900)))
        rdates = [rng.choice(own) if own and rng.random() < 0.3 else some_time() for _ in range(rng.randint(0, 6))]
        exdates = []
        for _ in range(rng.randint(0, 8)):
            roll = rng.random()
            if own and roll < 0.6:
                exdates.append(rng.choice(own))
            elif rdates and roll < 0.8:
                exdates.append(rng.choice(rdates))
            else:
                exdates.append(some_time())
        lines = [f"{spelled(rng, 'DTSTART')}:{ical(self.dtstart)}", f"{spelled(rng, 'RRULE')}:{rule}"]
        lines += date_lines(rng, "RDATE", rdates) + date_lines(rng, "EXDATE", exdates)
        rng.shuffle(lines)
        self.text = "\n".join(lines)

    def start(self):
        return to_utc(self.dtstart, self.zone) - timedelta(seconds=1)

    def query(self):
        return "\t".join(["rset", self.text.replace("\n", "|"), self.zone, rfc3339(self.start()), str(OCCURRENCES)])

    def expected(self):
        walls = rrulestr(self.text, forceset=True).xafter(self.dtstart - timedelta(hours=3), count=OCCURRENCES + 10,
                                                          inc=True)
        return increasing((to_utc(w, self.zone) for w in walls), self.start(), OCCURRENCES)


# RFC 5545 3.8.5.1 (EXDATE) and 3.8.5.2 (RDATE) examples on rules around
# them. dateutil 2.8 takes no TZID on an RDATE line: its reference spells the
# same instant in UTC.
RFC_CASES = [
    ("DTSTART:19960401T010000Z\nRRULE:FREQ=DAILY;COUNT=7\nEXDATE:19960402T010000Z,19960403T010000Z,19960404T010000Z",
     None),
    ("DTSTART:19970707T123000Z\nRRULE:FREQ=DAILY;COUNT=5\nRDATE:19970714T123000Z", None),
    ("DTSTART;TZID=America/New_York:19970707T083000\nRRULE:FREQ=DAILY;COUNT=5\n"
     "RDATE;TZID=America/New_York:19970714T083000",
     "DTSTART;TZID=America/New_York:19970707T083000\nRRULE:FREQ=DAILY;COUNT=5\nRDATE:19970714T123000Z"),
    ("DTSTART;TZID=America/New_York:19970902T090000\nRRULE:FREQ=DAILY;COUNT=10\n"
     "EXDATE;TZID=America/New_York:19970903T090000,19970905T090000\nRDATE:19970915T130000Z", None),
]


class RecurrenceSetDiffTest(unittest.TestCase):
    def answers(self, queries):
        driver = subprocess.run([os.environ["SCHEDULE_DRIVER"]], input="".join(q + "\n" for q in queries),
                                capture_output=True, text=True, check=True)
        answers = driver.stdout.splitlines()
        self.assertEqual(len(answers), len(queries), driver.stderr)
        return answers

    def test_random_sets_agree_with_dateutil(self):
        rng = random.Random(SEED)
        cases = [Case(rng) for _ in range(SETS)]
        answers = self.answers([case.query() for case in cases])
        mismatches, occurrences = [], 0
        for case, answer in zip(cases, answers):
            expected = case.expected()
            if answer.split() != expected:
                mismatches.append(f"\n\nset ({case.zone}):\n{case.text}\ntaskd:    {answer}\n"
                                  f"dateutil: {' '.join(expected)}")
            occurrences += len(expected)
        print(f"\ncompared {len(cases)} random sets with dateutil's rruleset: {occurrences} occurrences")
        self.assertFalse(mismatches, f"{len(mismatches)} of {len(cases)} sets differ:{''.join(mismatches[:5])}")

    def test_rfc5545_rdate_and_exdate_examples_agree_with_dateutil(self):
        queries, expectations = [], []
        for text, reference in RFC_CASES:
            dtstart = list(rrulestr(reference or text, forceset=True))[0]
            queries.append("\t".join(["rset", text.replace("\n", "|"), "UTC", rfc3339(dtstart - timedelta(seconds=1)),
                                      "20"]))
            expectations.append([rfc3339(t) for t in rrulestr(reference or text, forceset=True)])
        self.assertEqual([answer.split() for answer in self.answers(queries)], expectations)
        self.assertEqual(len(expectations[0]), 4)

    def test_an_rdate_of_dates_is_refused_saying_why(self):
        text = "DTSTART:19970101T090000|RRULE:FREQ=YEARLY|RDATE;VALUE=DATE:19970101,19970120,19970217"
        [answer] = self.answers(["\t".join(["rset", text, "UTC", "1997-01-01T00:00:00Z", "5"])])
        self.assertEqual(answer, 'ERROR RDATE: "19970101" is a date without a time of day')


if __name__ == "__main__":
    unittest.main()
