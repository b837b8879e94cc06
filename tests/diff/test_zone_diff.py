"""taskd's time zones against Python's zoneinfo, the standard library's own
reader of the same TZif files: every zone zoneinfo lists, from 1900 to 2100
(past the changes the files list, both follow each file's POSIX TZ rule).

taskd gives each zone's offset periods over the span (schedule_driver
`periods`): zoneinfo must agree on the offset at the first and the last
second of each period and at random instants. Around each change of offset,
and at random wall-clock times, both must agree on what a wall-clock time
names: one instant, two (a repeated hour, the earlier first) or none (a gap,
for which taskd gives its end: the instant of the change).

All queries go to one schedule_driver process (SCHEDULE_DRIVER).
"""
import bisect
import os
import random
import subprocess
import unittest
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo, available_timezones

SEED = 20261124
FIRST = datetime(1900, 1, 1, tzinfo=timezone.utc)
LAST = datetime(2100, 1, 1, tzinfo=timezone.utc)
RANDOM_PER_ZONE = 40
SECOND = timedelta(seconds=1)


def rfc3339(instant):
    return instant.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def wall_text(wall):
    return wall.strftime("%Y-%m-%dT%H:%M:%S")


def from_rfc3339(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def ask(queries):
    """schedule_driver's answers, one per query."""
    driver = os.environ.get("SCHEDULE_DRIVER")
    if not driver:
        raise unittest.SkipTest("SCHEDULE_DRIVER is not set")
    lines = "".join("\t".join(query) + "\n" for query in queries)
    answers = subprocess.run([driver], input=lines, capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(answers) == len(queries), f"schedule_driver answered {len(answers)} of {len(queries)} queries"
    return answers


def offset_at(zone, instant):
    return int(instant.astimezone(zone).utcoffset().total_seconds())


def change_between(zone, before, after):
    """The first instant in (before, after] whose offset differs from `before`'s."""
    offset = offset_at(zone, before)
    low, high = before, after  # offset_at(low) == offset, offset_at(high) != offset
    while high - low > SECOND:
        middle = low + (high - low) // 2
        low, high = (middle, high) if offset_at(zone, middle) == offset else (low, middle)
    return high


def zoneinfo_local(zone, wall):
    """What the wall-clock time names by zoneinfo, as schedule_driver writes it."""
    earlier = wall.replace(tzinfo=zone, fold=0).astimezone(timezone.utc)
    later = wall.replace(tzinfo=zone, fold=1).astimezone(timezone.utc)
    if earlier == later:
        return f"unique {rfc3339(earlier)}"
    if all(instant.astimezone(zone).replace(tzinfo=None) == wall for instant in (earlier, later)):
        return f"repeated {rfc3339(min(earlier, later))} {rfc3339(max(earlier, later))}"
    return f"skipped {rfc3339(change_between(zone, min(earlier, later), max(earlier, later)))}"


def parse_periods(answer):
    """[(begin, offset)] from schedule_driver's "BEGIN OFFSET …"."""
    words = answer.split()
    return [(from_rfc3339(words[i]), int(words[i + 1])) for i in range(0, len(words), 2)]


def walls_around_changes(periods):
    """Wall-clock times at the edges and in the middle of each gap and repeated span."""
    for (_, before), (at, after) in zip(periods, periods[1:]):
        if before == after:
            continue
        low = (at + timedelta(seconds=min(before, after))).replace(tzinfo=None)
        high = (at + timedelta(seconds=max(before, after))).replace(tzinfo=None)
        yield from (low - SECOND, low, low + (high - low) // 2, high - SECOND, high)


class ZonesAgainstZoneinfo(unittest.TestCase):
    def setUp(self):
        self.rng = random.Random(SEED)
        self.zones = sorted(available_timezones())
        self.mismatches = []

    def random_instant(self):
        return FIRST + timedelta(seconds=self.rng.randrange(int((LAST - FIRST).total_seconds())))

    def expect(self, what, expected, actual):
        if expected != actual:
            self.mismatches.append(f"{what}: zoneinfo {expected}, taskd {actual}")

    def check_periods(self, name, periods):
        zone = ZoneInfo(name)
        ends = [begin for begin, _ in periods[1:]] + [LAST]
        for (begin, offset), end in zip(periods, ends):
            self.expect(f"{name} offset at {rfc3339(begin)}", offset_at(zone, begin), offset)
            self.expect(f"{name} offset at {rfc3339(end - SECOND)}", offset_at(zone, end - SECOND), offset)
        begins = [begin for begin, _ in periods]
        for _ in range(RANDOM_PER_ZONE):
            instant = self.random_instant()
            offset = periods[bisect.bisect_right(begins, instant) - 1][1]
            self.expect(f"{name} offset at {rfc3339(instant)}", offset_at(zone, instant), offset)

    def test_offsets_and_wall_times_match_zoneinfo(self):
        answers = ask([("periods", name, rfc3339(FIRST), rfc3339(LAST)) for name in self.zones])
        local_queries = []
        for name, answer in zip(self.zones, answers):
            self.assertFalse(answer.startswith("ERROR"), f"{name}: {answer}")
            periods = parse_periods(answer)
            self.check_periods(name, periods)
            randoms = [self.random_instant().replace(tzinfo=None) for _ in range(RANDOM_PER_ZONE)]
            local_queries += [(name, wall) for wall in [*walls_around_changes(periods), *randoms]]
        answers = ask([("local", name, wall_text(wall)) for name, wall in local_queries])
        tally = {"unique": 0, "skipped": 0, "repeated": 0}
        for (name, wall), answer in zip(local_queries, answers):
            tally[answer.split()[0]] = tally.get(answer.split()[0], 0) + 1
            self.expect(f"{name} {wall_text(wall)}", zoneinfo_local(ZoneInfo(name), wall), answer)
        print(f"\nzone diff: {len(self.zones)} zones, {len(local_queries)} wall-clock times ({tally})")
        if self.mismatches:
            self.fail(f"{len(self.mismatches)} differences from zoneinfo; the first ones:\n"
                      + "\n".join(self.mismatches[:10]))
        self.assertGreater(tally["skipped"], 1000)
        self.assertGreater(tally["repeated"], 1000)


if __name__ == "__main__":
    unittest.main()
