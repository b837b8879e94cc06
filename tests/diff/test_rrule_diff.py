"""taskd's RRULE occurrences against python-dateutil's, on random rules.

Each rule gets a random DTSTART (a wall time in one of several zones) and a
random start instant, often years after DTSTART; the next 50 occurrences after
the start must agree. All queries go to one schedule_driver process.

dateutil works in naive wall times, as libical does. Its wall times become
instants by the rule taskd applies (RFC 5545, 3.3.5), which zoneinfo's fold=0
implements exactly: in a repeated hour the first instant; in a DST gap the
offset in force before the gap, i.e. the wall time moves forward by the gap's
length. So cases at DST changes are compared, not skipped.

Occurrences after 2037 are compared too: there the DST changes come from the
POSIX rule that closes each TZif file, in taskd as in zoneinfo.

The generator covers every part RFC 5545 allows, in every combination it
allows: BYSETPOS with any FREQ and several times a day, BYWEEKNO from -53 to
53 with or without BYDAY, BYMONTH or BYMONTHDAY, BYYEARDAY with BYMONTH or
BYMONTHDAY, sub-daily INTERVALs that do not divide a day next to BYxxx parts,
and INTERVALs far above 32767. RFC 5545's own examples are fixed cases in
test_rfc5545_examples.py. Left out for dateutil's sake, each with a unit test
of taskd's answer in tests/unit/test_rrule.cpp:
- BYDAY mixing numbered and plain weekdays (BYDAY=1MO,FR): dateutil keeps only
  the days that match both; RFC 5545 takes the union.
- BYWEEKNO=-52 or -53 in a year whose last days lie in the next year's week 1,
  which is that year's week -52 or -53: dateutil does not count those days
  back from the end of the next year (a TODO in its source).
- FREQ=WEEKLY with BYSETPOS when DTSTART is not the first day of its week
  (from WKST): dateutil picks from the days of DTSTART's week from DTSTART
  on; taskd, like every other period, from the whole week.
- BYYEARDAY with FREQ=SECONDLY: dateutil takes seconds to walk it.
"""

import os
import random
import subprocess
import time
import unittest
import warnings
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from dateutil.rrule import rrulestr

warnings.filterwarnings("ignore", "Using both 'count' and 'until'", DeprecationWarning)

SEED = 20260521
RULES = 5000
OCCURRENCES = 50
LAST_YEAR = 2582  # taskd computes no occurrence after this year

ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Asia/Tokyo"]
DST_ZONES = {"Europe/Berlin", "America/New_York", "Australia/Lord_Howe"}
END_OF_LAST_YEAR = datetime(LAST_YEAR, 12, 31, 23, 59, 59)
FREQS = ["SECONDLY", "MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY"]
SUB_DAILY = FREQS[:3]
WEEKDAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
# Seconds in a period (roughly, for MONTHLY and YEARLY): only used to place starts and UNTIL.
PERIOD = {"SECONDLY": 1, "MINUTELY": 60, "HOURLY": 3600, "DAILY": 86400, "WEEKLY": 7 * 86400,
          "MONTHLY": 30 * 86400, "YEARLY": 365 * 86400}
def sample(rng, values, most):
    return sorted(rng.sample(list(values), rng.randint(1, most)))


def numbers(values):
    return ",".join(str(v) for v in values)


def freq_of(rule):
    return rule.split("FREQ=")[1].split(";")[0]


class RuleGenerator:
    def __init__(self, rng):
        self.rng = rng

    def rule(self):
        rng = self.rng
        freq = rng.choice(FREQS)
        by = {}
        self.add_date_parts(freq, by)
        self.add_time_parts(by)
        self.add_set_positions(freq, by)
        interval = self.interval(freq)
        parts = ["FREQ=" + freq]
        if interval != 1 or rng.random() < 0.1:
            parts.append(f"INTERVAL={interval}")
        parts += [f"{name}={value if name == 'BYDAY' else numbers(value)}" for name, value in by.items()]
        if rng.random() < 0.3:
            parts.append("WKST=" + rng.choice(WEEKDAYS))
        rng.shuffle(parts)
        return ";".join(parts)

    def interval(self, freq):
        rng = self.rng
        roll = rng.random()
        if roll < 0.4:
            return 1
        if roll < 0.5:
            return rng.choice([32767, 32768, 90061, 1000000])
        return rng.choice([2, 3, 4, 5, 7, 10, 13, 45, 100, 8, 9, 16, 25, 48, 90, 96, 675]
                          if freq in SUB_DAILY else [2, 3, 4, 5, 6])

    def add_date_parts(self, freq, by):
        rng = self.rng
        if rng.random() < 0.25:
            by["BYMONTH"] = sample(rng, range(1, 13), 4)
        if freq == "YEARLY" and rng.random() < 0.25:
            # -52 and -53 only where no year ends in the next year's week 1 (see above)
            by["BYWEEKNO"] = sample(rng, list(range(1, 54)) + list(range(-51, 0)), 3)
        # Below a day, BYYEARDAY without BYMONTH or BYMONTHDAY: those often leave no day at all,
        # and dateutil walks each day of the centuries to find none.
        if freq == "YEARLY" and rng.random() < 0.15 or \
                freq in ("MINUTELY", "HOURLY") and "BYMONTH" not in by and rng.random() < 0.15:
            by["BYYEARDAY"] = sample(rng, list(range(1, 367)) + list(range(-366, 0)), 3)
        if freq != "WEEKLY" and (freq == "YEARLY" or "BYYEARDAY" not in by) and rng.random() < 0.3:
            by["BYMONTHDAY"] = sample(rng, list(range(1, 32)) + list(range(-31, 0)), 3)
        if rng.random() < 0.4:
            by["BYDAY"] = self.weekdays(freq, by)

    def weekdays(self, freq, by):
        rng = self.rng
        numbered = freq in ("MONTHLY", "YEARLY") and "BYWEEKNO" not in by and rng.random() < 0.5
        if not numbered:
            return ",".join(sample(rng, WEEKDAYS, 4))
        within_month = freq == "MONTHLY" or "BYMONTH" in by
        ordinals = [1, 2, 3, 4, 5, -1, -2, -5] if within_month else [1, 2, 10, 26, 52, 53, -1, -2, -53]
        chosen = {(rng.choice(ordinals), rng.choice(WEEKDAYS)) for _ in range(rng.randint(1, 3))}
        return ",".join(f"{n}{day}" for n, day in sorted(chosen))

    def add_time_parts(self, by):
        rng = self.rng
        if rng.random() < 0.3:
            by["BYHOUR"] = sample(rng, range(24), 3)
        if rng.random() < 0.3:
            by["BYMINUTE"] = sample(rng, range(60), 3)
        if rng.random() < 0.15:
            by["BYSECOND"] = sample(rng, range(60), 2)

    def add_set_positions(self, freq, by):
        """BYSETPOS, with any other BYxxx part to pick from. From WEEKLY down every period has (about)
        the same number of times: one position at least is among them, or the rule never occurs,
        and dateutil takes minutes to walk the centuries and find nothing."""
        rng = self.rng
        if not by or rng.random() >= 0.3:
            return
        positions = sample(rng, [1, 2, 3, 7, -1, -2, -3, -10], 3)
        levels = ["BYHOUR", "BYMINUTE", "BYSECOND"]
        below = {"WEEKLY": levels, "DAILY": levels, "HOURLY": levels[1:], "MINUTELY": levels[2:], "SECONDLY": []}
        if freq in below:
            times = len(by["BYDAY"].split(",")) if freq == "WEEKLY" and "BYDAY" in by else 1
            for level in below[freq]:
                times *= len(by.get(level, [0]))
            if all(abs(position) > times for position in positions):
                positions = sorted(set(positions + [rng.choice([1, -1]) * rng.randint(1, times)]))
        by["BYSETPOS"] = positions

    def dtstart(self, rule):
        rng = self.rng
        day = datetime(2024, 1, 1) + timedelta(days=rng.randint(0, 6 * 365))
        if freq_of(rule) == "WEEKLY" and "BYSETPOS" in rule:  # the first day of its week (see above)
            week_start = WEEKDAYS.index(rule.split("WKST=")[1][:2]) if "WKST=" in rule else 0
            day -= timedelta(days=(day.weekday() - week_start) % 7)
        if rng.random() < 0.3:  # the hours of DST changes
            return day.replace(hour=rng.randint(0, 3), minute=rng.choice([0, 15, 30, 45]))
        return day + timedelta(seconds=rng.randint(0, 86399))

    def bound(self, rule, dtstart):
        """COUNT, a wall-time UNTIL or a UTC UNTIL, sometimes."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.15:
            return f"{rule};COUNT={rng.randint(1, 60)}"
        if roll < 0.3:
            until = dtstart + timedelta(seconds=rng.randint(0, 80 * max(PERIOD[freq_of(rule)], 86400)))
            return f"{rule};UNTIL={until:%Y%m%dT%H%M%S}{'Z' if rng.random() < 0.5 else ''}"
        return rule

    def start(self, rule, dtstart, zone):
        """Where the comparison starts, as a wall time: before DTSTART, at it, or often far after it."""
        rng = self.rng
        period = min(PERIOD[freq_of(rule)], 5 * 86400) if zone in DST_ZONES else PERIOD[freq_of(rule)]
        roll = rng.random()
        if roll < 0.1:
            return dtstart - timedelta(seconds=rng.randint(1, 3 * period))
        if roll < 0.2:
            return dtstart
        ahead = min(rng.randint(0, 400) * period, 60 * 365 * 86400)
        return dtstart + timedelta(seconds=ahead + rng.randint(0, 59))


def to_utc(local, zone):
    return local.replace(tzinfo=zone, fold=0).astimezone(timezone.utc)


def rfc3339(instant):
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def split_until(rule):
    """The rule without UNTIL, a wall-time UNTIL and a UTC UNTIL (dateutil refuses
    one with a naive DTSTART, so it is applied here)."""
    parts = rule.split(";")
    for part in parts:
        if part.startswith("UNTIL="):
            rest = ";".join(p for p in parts if p != part)
            if part.endswith("Z"):
                return rest, None, datetime.strptime(part, "UNTIL=%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
            return rest, datetime.strptime(part, "UNTIL=%Y%m%dT%H%M%S"), None
    return rule, None, None


def dateutil_occurrences(rule, dtstart, zone_name, start, horizon=END_OF_LAST_YEAR):
    zone = ZoneInfo(zone_name)
    rule, wall_until, utc_until = split_until(rule)
    # Wall times before `start`'s own (less a DST shift) name instants before it.
    local_floor = start.astimezone(zone).replace(tzinfo=None) - timedelta(hours=3)
    found = []
    try:
        # UNTIL (with COUNT as well: deprecated, but it works) stops dateutil's search for rules that never occur.
        occurrences = rrulestr(rule, dtstart=dtstart).replace(until=min(wall_until or horizon, horizon))
        for local in occurrences.xafter(local_floor, inc=True):
            instant = to_utc(local, zone)
            if utc_until and instant > utc_until:
                break
            if instant > start and (not found or instant > found[-1]):
                found.append(instant)
                if len(found) == OCCURRENCES:
                    break
    except ValueError:  # "byxxx generates an empty set" (at once or when walked): the INTERVAL never reaches BYHOUR
        return []
    return [rfc3339(instant) for instant in found]


class Case:
    def __init__(self, generator):
        self.zone = generator.rng.choice(ZONES)
        rule = generator.rule()
        self.dtstart = generator.dtstart(rule)
        self.rule = generator.bound(rule, self.dtstart)
        self.start = to_utc(generator.start(self.rule, self.dtstart, self.zone), ZoneInfo(self.zone))

    def query(self):
        return "\t".join(["rrule", self.rule, f"{self.dtstart:%Y-%m-%dT%H:%M:%S}", self.zone, rfc3339(self.start),
                          str(OCCURRENCES)])

    def expected(self):
        """dateutil's occurrences after the start, and whether the rule never occurs at all."""
        found = dateutil_occurrences(self.rule, self.dtstart, self.zone, self.start)
        before = to_utc(self.dtstart - timedelta(days=2), ZoneInfo(self.zone))
        return found, not found and not dateutil_occurrences(self.rule, self.dtstart, self.zone, before)

    def describe(self, taskd, expected):
        return (f"\n\nrule:     {self.rule}\ndtstart:  {self.dtstart:%Y-%m-%dT%H:%M:%S} in {self.zone}\n"
                f"after:    {rfc3339(self.start)}\ntaskd:    {taskd}\ndateutil: {' '.join(expected)}")


class RRuleDiffTest(unittest.TestCase):
    def test_random_rules_agree_with_dateutil(self):
        generator = RuleGenerator(random.Random(SEED))
        cases = [Case(generator) for _ in range(RULES)]
        began = time.monotonic()
        driver = subprocess.run([os.environ["SCHEDULE_DRIVER"]], input="".join(c.query() + "\n" for c in cases),
                                capture_output=True, text=True, check=True)
        taskd_seconds = time.monotonic() - began
        answers = driver.stdout.splitlines()
        self.assertEqual(len(answers), len(cases), driver.stderr)
        with ProcessPoolExecutor() as pool:  # dateutil takes most of the time
            expectations = list(pool.map(Case.expected, cases, chunksize=50))

        mismatches, never, occurrences = [], 0, 0
        for case, answer, (expected, never_occurs) in zip(cases, answers, expectations):
            if answer.startswith("ERROR"):
                # taskd may refuse a generated rule only because it never occurs.
                if "produces no occurrence" in answer and never_occurs:
                    never += 1
                else:
                    mismatches.append(case.describe(answer, expected))
            elif answer.split() != expected:
                mismatches.append(case.describe(answer, expected))
            else:
                occurrences += len(expected)
        print(f"\ncompared {len(cases)} random rules with dateutil: {occurrences} occurrences of "
              f"{len(cases) - never - len(mismatches)} rules agree, {never} rules never occur in either "
              f"(taskd {taskd_seconds:.1f}s, in all {time.monotonic() - began:.1f}s)")
        self.assertFalse(mismatches, f"{len(mismatches)} of {len(cases)} rules differ:{''.join(mismatches[:5])}")


if __name__ == "__main__":
    unittest.main()
