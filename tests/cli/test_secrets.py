"""The database's secrets: never printed, in whatever spelling libpq reads a
server's location."""

import os
import socket
import unittest

from taskd_test import TaskdTestCase

SECRET = "s3cret-Pa55"


def closed_port():
    """A local TCP port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class SecretsTest(TaskdTestCase):
    def test_an_unreachable_server_never_shows_its_password(self):
        port = closed_port()
        server = f"127.0.0.1:{port}"
        unreachable = [
            f"host=127.0.0.1 port={port} user=taskd dbname=taskd connect_timeout=2 password={SECRET}",
            f"host=127.0.0.1 port={port} connect_timeout=2 password = '{SECRET} with spaces'",
            f"postgresql://{server}/taskd?user=taskd&%70assword={SECRET}&connect_timeout=2",
            f"postgresql://{server}/taskd?sslpassword={SECRET}&connect_timeout=2",
        ]
        refused = [
            f"postgresql://taskd:a/{SECRET}@{server}/taskd?connect_timeout=2",
            f"postgresql://taskd:a@{SECRET}@{server}/taskd?connect_timeout=2",
            f"POSTGRESQL://taskd:{SECRET}@{server}/taskd?connect_timeout=2",
            f"postgresql://{server}/taskd?PASSWORD={SECRET}&connect_timeout=2",
            f"host=127.0.0.1 port={port} PASSWORD={SECRET}",
        ]
        before = sorted(os.listdir(self.tmp))
        for location, expected in [(u, 69) for u in unreachable] + [(r, 2) for r in refused]:
            for args in (("status",), ("--json", "status")):
                with self.subTest(location=location, args=args):
                    code, out, err = self.run_taskd(*args, db=location)
                    self.assertEqual(code, expected, err)
                    self.assertNotIn(SECRET, out + err)
                    self.assertIn("****", err.splitlines()[-1])
                    self.assertEqual(sorted(os.listdir(self.tmp)), before, "no file was made of the location")


if __name__ == "__main__":
    unittest.main()
