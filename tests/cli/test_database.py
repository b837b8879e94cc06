"""The database file: where it is, how it is created, and what taskd refuses."""

import os
import sqlite3
import stat
import time
import unittest

from taskd_test import TaskdTestCase

# A user other than the one running the tests: nobody, on Debian.
ANOTHER_UID = 65534


def mode_of(path):
    return stat.S_IMODE(os.stat(path).st_mode)


class LocationAndModeTest(TaskdTestCase):
    def test_new_database_is_0600_in_new_0700_directories(self):
        db = os.path.join(self.tmp, "new", "nested", "taskd.db")
        old_umask = os.umask(0o022)  # the usual one; taskd must not rely on it
        try:
            self.add("a", "--every", "1h", "--", "true", db=db)
        finally:
            os.umask(old_umask)
        self.assertEqual(mode_of(db), 0o600)
        self.assertEqual(mode_of(os.path.dirname(db)), 0o700)
        self.assertEqual(mode_of(os.path.join(self.tmp, "new")), 0o700)
        self.assertEqual([t["name"] for t in self.tasks(db=db)], ["a"])

    def test_taskd_db_variable_is_the_default_location(self):
        env_db = os.path.join(self.tmp, "from-env", "tasks.db")
        self.env["TASKD_DB"] = env_db
        self.add("via-env", "--every", "1h", "--", "true", db=None)
        self.assertTrue(os.path.isfile(env_db))
        self.assertFalse(os.path.exists(os.path.join(self.env["XDG_STATE_HOME"], "taskd")))
        self.assertEqual([t["name"] for t in self.tasks(db=None)], ["via-env"])
        # --db wins over $TASKD_DB.
        self.assertEqual(self.tasks(), [])

    def test_xdg_state_home_is_the_default_without_taskd_db(self):
        self.add("via-xdg", "--every", "1h", "--", "true", db=None)
        db = os.path.join(self.env["XDG_STATE_HOME"], "taskd", "taskd.db")
        self.assertTrue(os.path.isfile(db))
        self.assertEqual(mode_of(db), 0o600)
        self.assertEqual(mode_of(os.path.dirname(db)), 0o700)
        self.assertEqual([t["name"] for t in self.tasks(db=db)], ["via-xdg"])

    def test_home_local_state_without_xdg_state_home(self):
        del self.env["XDG_STATE_HOME"]
        self.add("via-home", "--every", "1h", "--", "true", db=None)
        db = os.path.join(self.env["HOME"], ".local", "state", "taskd", "taskd.db")
        self.assertEqual([t["name"] for t in self.tasks(db=db)], ["via-home"])


class UnsafeDatabaseTest(TaskdTestCase):
    def setUp(self):
        super().setUp()
        self.state_dir = os.path.join(self.tmp, "state")
        self.db = os.path.join(self.state_dir, "taskd.db")
        self.marker = os.path.join(self.tmp, "ran")
        self.add("touch", "--every", "1h", "--start-now", "--", "touch", self.marker)

    def assertRefusedToRun(self, path, *why):
        code, out, err = self.run_taskd("run-once")
        self.assertEqual(code, 69, "stdout: %s\nstderr: %s" % (out, err))
        self.assertOneErrorLine(err, path, *why)
        self.assertFalse(os.path.exists(self.marker))
        self.assertEqual(self.history(), [])

    def test_world_writable_database_is_refused(self):
        os.chmod(self.db, 0o666)
        self.assertRefusedToRun(self.db, "0666")

    def test_group_writable_database_is_refused(self):
        os.chmod(self.db, 0o620)
        self.assertRefusedToRun(self.db, "0620")

    def test_group_writable_directory_is_refused(self):
        os.chmod(self.state_dir, 0o770)
        self.assertRefusedToRun(self.state_dir, "0770")

    def test_private_database_runs(self):
        # The control for the tests above: the same setup with safe modes runs.
        self.run_once()
        self.assertTrue(os.path.exists(self.marker))

    def move_state_dir_into(self, name, mode):
        """Moves the database's directory into a new directory `name` of mode
        `mode` in tmp; returns that directory."""
        outer = os.path.join(self.tmp, name)
        os.mkdir(outer)
        os.chmod(outer, mode)
        os.rename(self.state_dir, os.path.join(outer, "state"))
        self.db = os.path.join(outer, "state", "taskd.db")
        return outer

    @unittest.skipUnless(os.geteuid() == 0, "giving a file to another user needs root")
    def test_symbolic_link_on_the_way_owned_by_another_user_is_refused(self):
        # Its owner can point it at a database of theirs at any moment, the
        # moment between taskd's open and its check included.
        link = os.path.join(self.tmp, "link")
        os.symlink(self.state_dir, link)
        os.lchown(link, ANOTHER_UID, ANOTHER_UID)
        self.db = os.path.join(link, "taskd.db")
        self.assertRefusedToRun(link, "symbolic link", "uid %d" % ANOTHER_UID)

    @unittest.skipUnless(os.geteuid() == 0, "giving a file to another user needs root")
    def test_directory_on_the_way_owned_by_another_user_is_refused(self):
        theirs = self.move_state_dir_into("theirs", 0o755)
        os.chown(theirs, ANOTHER_UID, ANOTHER_UID)
        self.assertRefusedToRun(theirs, "uid %d" % ANOTHER_UID)

    def test_directory_on_the_way_that_others_can_write_is_refused_unless_sticky(self):
        shared = self.move_state_dir_into("shared", 0o777)
        self.assertRefusedToRun(shared, "0777")
        # Sticky, as /tmp: only an entry's owner may rename or replace it.
        os.chmod(shared, 0o1777)
        self.run_once()
        self.assertTrue(os.path.exists(self.marker))

    def test_symbolic_link_of_your_own_is_followed(self):
        link = os.path.join(self.tmp, "link")
        os.symlink(self.state_dir, link)
        self.db = os.path.join(link, "taskd.db")
        self.run_once()
        self.assertTrue(os.path.exists(self.marker))


class NotATaskdDatabaseTest(TaskdTestCase):
    def test_text_file_is_refused_and_left_alone(self):
        with open(self.db, "w") as f:
            f.write("my precious notes\n" * 100)
        os.chmod(self.db, 0o600)
        for args in (("list",), ("add", "a", "--every", "1h", "--", "true"), ("run-once",)):
            code, out, err = self.run_taskd(*args)
            self.assertEqual(code, 69, "%s: %s %s" % (args, out, err))
            self.assertOneErrorLine(err, self.db, "not a database")
        with open(self.db) as f:
            self.assertEqual(f.read(), "my precious notes\n" * 100)

    def test_sqlite_file_with_other_tables_is_refused_and_left_alone(self):
        conn = sqlite3.connect(self.db)
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount INTEGER)")
        conn.execute("INSERT INTO invoices (amount) VALUES (42)")
        conn.commit()
        conn.close()
        os.chmod(self.db, 0o600)
        for args in (("list",), ("add", "a", "--every", "1h", "--", "true"), ("run-once",)):
            code, out, err = self.run_taskd(*args)
            self.assertEqual(code, 69, "%s: %s %s" % (args, out, err))
            self.assertOneErrorLine(err, self.db, "not a taskd database")
        conn = sqlite3.connect(self.db)
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        rows = conn.execute("SELECT amount FROM invoices").fetchall()
        conn.close()
        self.assertEqual((tables, rows), (["invoices"], [(42,)]))


def files_under(top):
    return sorted(os.path.join(d, name) for d, dirs, files in os.walk(top) for name in dirs + files)


class DatabaseNameTest(TaskdTestCase):
    """Names that name no database file are refused before anything is made."""

    def assertRefusedAndNothingMade(self, db, code, *fragments, option="--db"):
        before = files_under(self.tmp)
        got, out, err = self.run_taskd(option, db, "add", "a", "--every", "1h", "--", "true", db=None)
        self.assertEqual((got, out), (code, ""), err)
        self.assertOneErrorLine(err, *fragments)
        self.assertEqual(files_under(self.tmp), before)

    def test_sqlite_in_memory_database_is_refused(self):
        self.assertRefusedAndNothingMade(":memory:", 65, '":memory:"', "in memory")

    def test_sqlite_uri_is_refused(self):
        for uri in ("file::memory:", "file:tasks.db?mode=memory"):
            with self.subTest(uri=uri):
                self.assertRefusedAndNothingMade(uri, 65, uri, "URI")

    def test_empty_db_is_a_usage_error_not_the_default_database(self):
        self.assertRefusedAndNothingMade("", 2, "--db", "empty")

    def test_empty_state_dir_is_a_usage_error_not_the_default_one(self):
        self.assertRefusedAndNothingMade("", 2, "--state-dir", "empty", option="--state-dir")

    def test_path_component_longer_than_a_file_name_is_bad_input(self):
        long_name = "a" * 256
        self.assertRefusedAndNothingMade(os.path.join(self.tmp, long_name, "taskd.db"), 65, "256 bytes", "255")
        self.assertRefusedAndNothingMade(os.path.join(self.tmp, long_name), 65, "256 bytes", "255")


class LockedDatabaseTest(TaskdTestCase):
    def test_write_command_gives_up_on_a_locked_database(self):
        self.add("existing", "--every", "1h", "--", "true")
        holder = sqlite3.connect(self.db, isolation_level=None)
        self.addCleanup(holder.close)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            started = time.monotonic()
            code, out, err = self.run_taskd("add", "blocked", "--every", "1h", "--", "true", timeout=30)
            waited = time.monotonic() - started
        finally:
            holder.execute("ROLLBACK")
        self.assertEqual(code, 69, "stdout: %s\nstderr: %s" % (out, err))
        self.assertOneErrorLine(err, self.db, "locked")
        self.assertGreaterEqual(waited, 4)  # it waited for the busy timeout (5 s)
        self.assertEqual([t["name"] for t in self.tasks()], ["existing"])
        # Released, the same command works.
        self.add("blocked", "--every", "1h", "--", "true")


if __name__ == "__main__":
    unittest.main()
