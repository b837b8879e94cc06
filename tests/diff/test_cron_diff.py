"""taskd's cron slots against Debian's python3-croniter (1.3.5).

Random but reproducible 5-field expressions (croniter reads a sixth field as
seconds *last*, so 6-field ones are left to the unit tests; H too, since
croniter hashes differently), each in one of several zones from a random
start, compared on their next 50 instants.

croniter runs on naive wall-clock times, and zoneinfo turns its wall times
into instants: with a time zone, croniter 1.3.5 shifts slots by the DST
difference whenever the offset changes between two of them, even months
away from the change. Cases with the start or a slot within a few hours of
an offset change are skipped: there taskd follows cronie, which croniter does
not (the unit tests cover those by hand).

A second set draws expressions with the days that depend on the month, in
the forms croniter 1.3.5 has: L in the day of month, alone, in a list
("7,14,L") or ending a range ("29-L"), and D#N in the day of week (numbers or
names). Its other forms (L-N, NW, LW, DL) are not in croniter: the unit
tests check them against fixed calendars.

A third set adds a year field (7 fields: second 0 first, the year last),
which croniter 1.3.5 does not read: the reference is croniter's slots of the
5 fields, walked from the start of each listed year and kept within it.

All queries go to one schedule_driver process (SCHEDULE_DRIVER).
"""
import collections
import os
import random
import subprocess
import unittest
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from croniter import croniter, CroniterBadDateError

SEED = 20261121
CANDIDATES = 2600
MIN_COMPARED = 2000
SLOTS = 50
ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Asia/Tokyo"]
NEAR_A_CHANGE = timedelta(hours=3)
# Past 2037 the zones' DST changes come from the POSIX rule that closes each
# TZif file, in taskd as in zoneinfo.
FIRST_START = datetime(2000, 1, 1, tzinfo=timezone.utc)
LAST_START = datetime(2100, 1, 1, tzinfo=timezone.utc)

MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
WEEKDAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]
LONGEST_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


class Field:
    def __init__(self, low, high, names=None, first_name_value=0):
        self.low, self.high = low, high
        self.names, self.first_name_value = names, first_name_value

    def spell(self, rng, value):
        """A value as a number, or sometimes as a name in random case."""
        index = value - self.first_name_value
        if self.names and 0 <= index < len(self.names) and rng.random() < 0.4:
            return "".join(c.lower() if rng.random() < 0.5 else c for c in self.names[index])
        return str(value)

    def spell_range_end(self, rng, value):
        # Sunday may end a weekday range by name, as 7: "FRI-SUN".
        if self.names is WEEKDAYS and value == 7 and rng.random() < 0.5:
            return "SUN"
        return self.spell(rng, value)

    def step(self, rng):
        return rng.randint(1, self.high)

    def item(self, rng):
        start = rng.randint(self.low, self.high)
        first = self.spell(rng, start)
        span = f"{first}-{self.spell_range_end(rng, rng.randint(start, self.high))}"
        return rng.choice([first, span, f"{span}/{self.step(rng)}", f"{first}/{self.step(rng)}"])

    def random_text(self, rng):
        roll = rng.random()
        if roll < 0.35:
            return "*"
        if roll < 0.5:
            return f"*/{self.step(rng)}"
        return ",".join(self.item(rng) for _ in range(rng.randint(1, 3)))


FIELDS = [Field(0, 59), Field(0, 23), Field(1, 31), Field(1, 12, MONTHS, 1), Field(0, 7, WEEKDAYS, 0)]


def random_expression(rng):
    return " ".join(field.random_text(rng) for field in FIELDS)


def month_end_item(rng):
    day = rng.randint(1, 31)
    return rng.choice(["L", "L", f"{day}-L", str(day)])


def nth_weekday_item(rng):
    day = rng.randint(0, 7)
    spelled = FIELDS[4].spell(rng, day) if day < 7 else "7"
    return f"{spelled}#{rng.randint(1, 5)}"


def random_month_end_expression(rng):
    """Minute, hour and month as random_expression draws them; the day fields
    with L or D#N: one of them restricted that way, or L with plain weekdays
    (Vixie's OR)."""
    minute, hour, _, month, _ = (field.random_text(rng) for field in FIELDS)
    roll = rng.random()
    if roll < 0.45:
        days, weekdays = ",".join(month_end_item(rng) for _ in range(rng.randint(1, 3))), "*"
        if "L" not in days:
            days += ",L"
    elif roll < 0.85:
        days, weekdays = "*", ",".join(nth_weekday_item(rng) for _ in range(rng.randint(1, 2)))
    else:
        days, weekdays = "L", FIELDS[4].random_text(rng).replace("*", "1")
    return f"{minute} {hour} {days} {month} {weekdays}"


def random_year_field(rng, near):
    """Years around `near` (within 1970-2099): one, a list, a range, a range or a year with a step."""
    near = min(near, 2091)
    def year():
        return rng.randint(near - 3, near + 8)
    low = year()
    high = rng.randint(low, near + 8)
    return rng.choice([str(low), f"{low},{year()},{year()}", f"{low}-{high}", f"{low}-{high}/{rng.randint(1, 3)}",
                       f"{low}/{rng.randint(2, 5)}"])


def years_listed(field):
    """The years a year field of random_year_field lists."""
    years = set()
    for item in field.split(","):
        base, _, step = item.partition("/")
        low, _, high = base.partition("-")
        last = int(high) if high else (2099 if step else int(low))
        years.update(range(int(low), last + 1, int(step or 1)))
    return sorted(years)


def random_year_case(rng):
    expression, zone, start = random_expression(rng), rng.choice(ZONES), random_start(rng)
    return f"0 {expression} {random_year_field(rng, start.year)}", zone, start


def croniter_slots_in_listed_years(expression, zone, start):
    """The next SLOTS instants after `start` of a 7-field expression: croniter's
    slots of its 5 middle fields, from the start of each listed year, kept in it."""
    fields = expression.split()
    five = " ".join(fields[1:6])
    found = []
    for year in years_listed(fields[6]):
        wall_start = max(start.astimezone(zone).replace(tzinfo=None), datetime(year, 1, 1) - timedelta(seconds=1))
        if wall_start.year > year:
            continue
        walls = croniter(five, wall_start, day_or=either_day_field_matches(five))
        while len(found) < SLOTS:
            wall = walls.get_next(datetime)
            if wall.year != year:
                break
            found.append(wall.replace(tzinfo=zone))
    return found


def either_day_field_matches(expression):
    """Vixie's rule as cronie reads it: both day fields restricted, i.e. neither starts with '*'."""
    fields = expression.split()
    return not fields[2].startswith("*") and not fields[4].startswith("*")


def croniter_reads_days_differently(expression, expanded):
    # croniter calls a day field unrestricted when it lists every value ("1-31"),
    # cronie only when it starts with '*'.
    return either_day_field_matches(expression) and (expanded[2] == ["*"] or expanded[4] == ["*"])


def croniter_overshoots_month_end(expanded):
    # croniter 1.3.5 walks from day x to the next listed day d by adding d - x
    # days even when the month ends before d, landing on day 1-3 of the next
    # month and skipping whatever is listed there ('*/30' in February).
    days = expanded[2]
    return days != ["*"] and max(days) >= 29 and min(days) <= 3


def croniter_gives_up_on_half_of_the_or(expression, expanded):
    # With Vixie's OR, croniter searches each day field alone and gives up when
    # the day of month never falls in the listed months ('31 9 MON').
    days = expanded[2]
    months = range(1, 13) if expanded[3] == ["*"] else expanded[3]
    return (either_day_field_matches(expression) and days != ["*"]
            and all(min(days) > LONGEST_MONTH[month - 1] for month in months))


def croniter_skip_reason(expression):
    expanded, _ = croniter.expand(expression)
    if croniter_reads_days_differently(expression, expanded):
        return "day fields read differently"
    if croniter_overshoots_month_end(expanded):
        return "croniter's month-end bug"
    if croniter_gives_up_on_half_of_the_or(expression, expanded):
        return "croniter gives up on half of the OR"
    return None


def month_end_skip_reason(expression):
    expanded, _ = croniter.expand(expression)
    if croniter_reads_days_differently(expression, expanded):
        return "day fields read differently"
    # croniter 1.3.5 folds a list that covers 2-31 into '*', day 1 included ('2-L,L').
    if expanded[2] == ["*"] and not expression.split()[2].startswith("*"):
        return "croniter reads 2-L,L as every day"
    # It walks to a listed day past 28 as above, and then skips the month's
    # last day too ('31,L' in September).
    numbers = [day for day in expanded[2] if isinstance(day, int)]
    if numbers and max(numbers) >= 29:
        return "croniter's month-end bug"
    return None


def timeline_skip_reason(zone, instants):
    if any(near_an_offset_change(zone, instant) for instant in instants):
        return "near a DST change"
    return None


def rfc3339(instant):
    return instant.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def croniter_slots(expression, zone, start):
    """The next SLOTS instants after `start`, found by croniter on the wall clock of `zone`."""
    wall_start = start.astimezone(zone).replace(tzinfo=None)
    walls = croniter(expression, wall_start, day_or=either_day_field_matches(expression))
    return [walls.get_next(datetime).replace(tzinfo=zone) for _ in range(SLOTS)]


def near_an_offset_change(zone, instant):
    before, after = instant - NEAR_A_CHANGE, instant + NEAR_A_CHANGE
    return before.astimezone(zone).utcoffset() != after.astimezone(zone).utcoffset()


def random_start(rng):
    span = int((LAST_START - FIRST_START).total_seconds())
    return FIRST_START + timedelta(seconds=rng.randrange(span))


def random_cases(count, expression=random_expression, seed=SEED):
    rng = random.Random(seed)
    return [(expression(rng), rng.choice(ZONES), random_start(rng)) for _ in range(count)]


def describe(expression, zone_name, start, expected, actual):
    padded = actual + [""] * (len(expected) - len(actual))
    rows = "\n".join(f"    {e:22} {a}" + ("" if e == a else "   <--") for e, a in zip(expected, padded))
    return f"{expression!r} in {zone_name} after {rfc3339(start)}:\n    {'croniter':22} taskd\n{rows}"


def ask_driver(cases):
    driver = os.environ.get("SCHEDULE_DRIVER")
    if not driver:
        raise unittest.SkipTest("SCHEDULE_DRIVER is not set")
    queries = "".join(f"cron\t{expression}\t{zone}\t{rfc3339(start)}\t{SLOTS}\n" for expression, zone, start in cases)
    answer = subprocess.run([driver], input=queries, capture_output=True, text=True, check=True, timeout=300)
    lines = answer.stdout.splitlines()
    if len(lines) != len(cases):
        raise AssertionError(f"schedule_driver answered {len(lines)} of {len(cases)} queries:\n{answer.stderr}")
    return lines


class CronAgainstCroniter(unittest.TestCase):
    def test_next_50_slots_match_croniter(self):
        self.compare(random_cases(CANDIDATES), croniter_skip_reason, "")

    def test_month_end_and_nth_weekday_match_croniter(self):
        self.compare(random_cases(CANDIDATES, random_month_end_expression, SEED + 1), month_end_skip_reason,
                     " with L and #")

    def test_year_field_matches_croniter_within_the_listed_years(self):
        rng = random.Random(SEED + 2)
        cases = [random_year_case(rng) for _ in range(CANDIDATES)]
        self.compare(cases, lambda expression: croniter_skip_reason(" ".join(expression.split()[1:6])),
                     " with a year field", croniter_slots_in_listed_years)

    def compare(self, cases, skip_reason, what, slots=croniter_slots):
        tally = collections.Counter()
        mismatches = []
        for (expression, zone_name, start), answer in zip(cases, ask_driver(cases)):
            if answer.startswith("ERROR"):
                self.assert_never_runs(expression, answer)
                tally["rejected as never running"] += 1
                continue
            zone = ZoneInfo(zone_name)
            reason = skip_reason(expression)
            if not reason:
                try:
                    expected = [rfc3339(instant) for instant in slots(expression, zone, start)]
                except CroniterBadDateError:
                    tally["skipped: croniter found no next date"] += 1
                    continue
                actual = answer.split()
                reason = timeline_skip_reason(zone, [start] + [parse_rfc3339(text) for text in expected + actual])
            if reason:
                tally[f"skipped: {reason}"] += 1
                continue
            tally["compared"] += 1
            if expected != actual:
                mismatches.append(describe(expression, zone_name, start, expected, actual))
        others = ", ".join(f"{count} {what}" for what, count in sorted(tally.items()) if what != "compared")
        print(f"\ncron diff{what}: {tally['compared']} expressions compared against croniter on {SLOTS} slots each "
              f"({others})")
        if mismatches:
            self.fail(f"{len(mismatches)} expressions differ from croniter; the first ones:\n"
                      + "\n".join(mismatches[:5]))
        self.assertGreaterEqual(tally["compared"], MIN_COMPARED)

    def assert_never_runs(self, expression, answer):
        self.assertIn("never runs", answer, f"taskd refused {expression!r}: {answer}")
        if len(expression.split()) == 7:
            expression = " ".join(expression.split()[1:6])  # its days never fall in its months, whatever the year
        with self.assertRaises(CroniterBadDateError, msg=f"taskd says {expression!r} never runs; croniter disagrees"):
            croniter(expression, datetime(2026, 1, 1), day_or=either_day_field_matches(expression)).get_next(datetime)


if __name__ == "__main__":
    unittest.main()
