"""taskd's RRULE occurrences against the examples of RFC 5545 itself.

rfc5545_examples.json holds every RRULE example of RFC 5545, section 3.8.5.3
("Recurrence Rule"), transcribed from the RFC's text, not from any library's
output. Each entry has the RFC's sentence ("title"), the DTSTART wall time and
its TZID ("dtstart", "zone": America/New_York throughout), the RRULE value
("rule"), the occurrences the RFC lists, as wall times in that zone
("expected"), and how many occurrences are compared ("limit").

How the RFC's lists were read:
- "September 2-30" is every day from the 2nd to the 30th. An ellipsis between
  two listed values ("September 2,4,6,8...24,26,28,30", "9:00,9:20,9:40,
  10:00,10:20, ... 16:00,16:20,16:40") stands for the values between them, at
  the step of the values before it. A closing ellipsis ("December 1,3,...",
  "June 13...") ends the list.
- A header without a time ("(1997 EDT) August 5,10,19,24") has DTSTART's time.
  The RFC's EDT and EST labels agree with zoneinfo's for every listed time.
- Where an example gives a second rule ("or"), each rule is its own entry with
  the same title and list: "Every day in January, for 3 years" (YEARLY and
  DAILY), "Weekly on Tuesday and Thursday for five weeks" (UNTIL and COUNT),
  "Every 20 minutes from 9:00 AM to 4:40 PM every day" (DAILY and MINUTELY).
  These are alternatives, not several RRULEs in one component.
- Rules with COUNT or UNTIL list every occurrence, and their limit is one more
  than the list, so taskd must also end the rule where the RFC does. Rules
  the RFC gives as "forever" list the occurrences the RFC spells out, from
  DTSTART on, and compare exactly that many (limit = the list's length).
- In every example kept, DTSTART is itself an occurrence of the rule and the
  RFC's first listed occurrence (the RFC counts DTSTART as the first instance,
  and COUNT counts it). So the query starts one second before DTSTART and
  compares from there.

Skipped: "Every Friday the 13th, forever". It has an EXDATE: its DTSTART
(Tuesday 1997-09-02) is not a Friday the 13th, it is the one example whose
DTSTART is not an occurrence of its rule, and the RFC removes it from the set
with the EXDATE. No example of the section uses RDATE or several RRULEs.

Errata: the RFC's verified erratum 3883 is applied. The RFC prints "Every 3
hours from 9:00 AM to 5:00 PM on a specific day" with UNTIL=19970902T170000Z,
which is 13:00 EDT and so would end the rule after 12:00; the erratum makes
it 19970902T210000Z (17:00 EDT), which gives the RFC's 09:00, 12:00, 15:00.
The rejected erratum 6212 (UNTIL of the "until December 24, 1997" examples)
is not applied. With erratum 3883, every list agrees with its rule as
python-dateutil computes it (checked when the fixture was written; the RFC's
text, not dateutil, is what the fixture holds).

Wall times become instants by RFC 5545, 3.3.5, as zoneinfo's fold=0 does (none
of these times falls in a DST gap or a repeated hour). All queries go to one
schedule_driver process (SCHEDULE_DRIVER); without it the test fails.
"""

import json
import os
import re
import subprocess
import unittest
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

FIXTURE = Path(__file__).with_name("rfc5545_examples.json")
SECOND = timedelta(seconds=1)


def load_examples():
    with open(FIXTURE, encoding="utf-8") as f:
        return json.load(f)


def to_utc(wall_text, zone_name):
    wall = datetime.strptime(wall_text, "%Y-%m-%dT%H:%M:%S")
    return wall.replace(tzinfo=ZoneInfo(zone_name), fold=0).astimezone(timezone.utc)


def rfc3339(instant):
    return instant.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def bounded(rule):
    return re.search(r"(^|;)(COUNT|UNTIL)=", rule) is not None


def query(example):
    start = to_utc(example["dtstart"], example["zone"]) - SECOND
    return "\t".join(["rrule", example["rule"], example["dtstart"], example["zone"], rfc3339(start),
                      str(example["limit"])])


def expected_instants(example):
    return [rfc3339(to_utc(wall, example["zone"])) for wall in example["expected"]][:example["limit"]]


def as_wall(instant_text, zone_name):
    try:
        instant = datetime.strptime(instant_text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return "?"
    return instant.astimezone(ZoneInfo(zone_name)).strftime("%Y-%m-%d %H:%M:%S %Z")


def describe(example, answer, expected):
    head = (f"\n\n{example['title']}\n  rule:    {example['rule']}\n"
            f"  dtstart: {example['dtstart']} {example['zone']}, limit {example['limit']}\n")
    if answer.startswith("ERROR"):
        return head + f"  taskd:   {answer}\n  RFC:     {' '.join(expected)}"
    actual = answer.split()
    width = max(len(expected), len(actual))
    expected_rows = expected + ["-"] * (width - len(expected))
    actual_rows = actual + ["-"] * (width - len(actual))
    rows = "\n".join(
        f"    {e:21} {a:21} {as_wall(a, example['zone']) if a != '-' else ''}" + ("" if e == a else "   <--")
        for e, a in zip(expected_rows, actual_rows))
    return head + f"    {'RFC':21} {'taskd':21} taskd's wall time\n{rows}"


class RFC5545ExamplesTest(unittest.TestCase):
    def test_fixture_is_well_formed(self):
        examples = load_examples()
        self.assertEqual(len(examples), 41)
        for example in examples:
            with self.subTest(title=example["title"], rule=example["rule"]):
                walls = [datetime.strptime(w, "%Y-%m-%dT%H:%M:%S") for w in example["expected"]]
                self.assertEqual(walls, sorted(set(walls)))
                self.assertEqual(example["expected"][0], example["dtstart"])
                extra = 1 if bounded(example["rule"]) else 0
                self.assertEqual(example["limit"], len(example["expected"]) + extra)
                ZoneInfo(example["zone"])

    def test_occurrences_match_the_rfc(self):
        driver = os.environ.get("SCHEDULE_DRIVER")
        if not driver:
            self.fail("SCHEDULE_DRIVER is not set: it must name the schedule_driver program "
                      "(tests/diff/schedule_driver.cpp, built as tests/schedule_driver)")
        examples = load_examples()
        queries = "".join(query(example) + "\n" for example in examples)
        try:
            run = subprocess.run([driver], input=queries, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as error:
            self.fail(f"schedule_driver {driver!r} could not be run: {error}")
        if run.returncode != 0:
            self.fail(f"schedule_driver exited with status {run.returncode}:\n{run.stderr}")
        answers = run.stdout.splitlines()
        if len(answers) != len(examples):
            self.fail(f"schedule_driver answered {len(answers)} of {len(examples)} queries:\n{run.stderr}")

        mismatches = []
        for example, answer in zip(examples, answers):
            expected = expected_instants(example)
            if answer.startswith("ERROR") or answer.split() != expected:
                mismatches.append(describe(example, answer, expected))
        if mismatches:
            self.fail(f"{len(mismatches)} of {len(examples)} RFC 5545 examples differ:{''.join(mismatches)}")


if __name__ == "__main__":
    unittest.main()
