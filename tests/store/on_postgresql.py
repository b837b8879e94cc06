"""Runs a doctest program (the store tests) with its databases on a throwaway
PostgreSQL server (tests/cli/pg_server.py): TASKD_TEST_POSTGRESQL names a
database of its own, and the test suite "sqlite" (the tests of the file
itself) is left out. Without the server binaries it prints SKIPPED and
passes, as the command-line tests do.

    on_postgresql.py PROGRAM [DOCTEST OPTIONS...]
"""

import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
import pg_server  # noqa: E402


def main():
    if not pg_server.binaries():
        print("SKIPPED: no PostgreSQL server here (Debian's postgresql package)")
        return 0
    server = pg_server.server()
    env = dict(os.environ, TASKD_TEST_POSTGRESQL=server.uri(server.new_database()))
    return subprocess.run([sys.argv[1], "--test-suite-exclude=sqlite", *sys.argv[2:]], env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
