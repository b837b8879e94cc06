"""taskd run under a systemd unit of Type=notify: it speaks sd_notify(3) on
the datagram socket $NOTIFY_SOCKET names (here one the test listens on):
READY=1 with a STATUS= line once it has passed once, WATCHDOG=1 from the
loop while it goes round (none while it is stopped), STOPPING=1 on SIGTERM;
and no task sees the socket or the watchdog in its environment."""

import os
import re
import signal
import socket
import time
import unittest

from loop_helpers import LoopTestCase, wait_for

WATCHDOG_USEC = 600_000  # taskd pings every 0.3 s


class NotifyTest(LoopTestCase):
    def setUp(self):
        super().setUp()
        path = os.path.join(self.tmp, "notify.sock")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.addCleanup(self.listener.close)
        self.listener.bind(path)
        self.env = dict(self.env, NOTIFY_SOCKET=path, WATCHDOG_USEC=str(WATCHDOG_USEC))

    def next_message(self, seconds):
        """The next datagram as text, or None when none comes within `seconds`."""
        self.listener.settimeout(seconds)
        try:
            return self.listener.recv(4096).decode()
        except socket.timeout:
            return None

    def messages_within(self, seconds):
        deadline = time.monotonic() + seconds
        messages = []
        while (left := deadline - time.monotonic()) > 0:
            message = self.next_message(left)
            if message is not None:
                messages.append(message)
        return messages

    def message_with(self, field, seconds=20):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            message = self.next_message(deadline - time.monotonic())
            if message and field in message.split("\n"):
                return message
        raise AssertionError(f"no {field} within {seconds}s")

    def test_ready_status_pings_and_stopping(self):
        seen = os.path.join(self.tmp, "env-of-the-task")
        self.add("daily", "--every", "1d", "--", "true")
        self.add("env", "--every", "1h", "--start-now", "--", "sh", "-c", f"env > {seen}")
        proc, _ = self.start("run")

        ready = self.message_with("READY=1")
        self.assertRegex(ready, r"STATUS=\d running, 2 tasks, next run in \d")
        self.wait_for_file(seen)
        wait_for(lambda: "PATH=" in self.read(seen), 20, "the task's environment")
        variables = [line.split("=", 1)[0] for line in self.read(seen).splitlines()]
        for name in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
            self.assertNotIn(name, variables)

        for _ in range(3):
            self.message_with("WATCHDOG=1", seconds=5)

        # A stopped loop pings no more: nothing within several intervals.
        proc.send_signal(signal.SIGSTOP)
        while self.next_message(0.05) is not None:
            pass  # what was sent before the stop
        self.assertIsNone(self.next_message(4 * WATCHDOG_USEC / 1e6))
        proc.send_signal(signal.SIGCONT)
        self.message_with("WATCHDOG=1", seconds=5)

        proc.send_signal(signal.SIGTERM)
        stopping = self.message_with("STOPPING=1")
        self.assertRegex(stopping, re.compile(r"STATUS=stopping on SIGTERM"))
        proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 0)

    def test_a_watchdog_meant_for_another_process_is_not_pinged(self):
        self.env["WATCHDOG_PID"] = "1"
        proc, _ = self.start("run")
        self.message_with("READY=1")
        pings = [m for m in self.messages_within(4 * WATCHDOG_USEC / 1e6) if "WATCHDOG=1" in m.split("\n")]
        self.assertEqual(pings, [])
        self.stop(proc)

    @staticmethod
    def read(path):
        with open(path) as f:
            return f.read()


if __name__ == "__main__":
    unittest.main()
