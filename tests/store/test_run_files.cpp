#include <doctest/doctest.h>

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/run_files.hpp"

using namespace taskd;
namespace fs = std::filesystem;

namespace {

ino_t inode_of(const std::string& path) {
  struct stat info {};
  REQUIRE(::lstat(path.c_str(), &info) == 0);
  return info.st_ino;
}

std::string contents_of(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("an ended run's state file, emptied, is the next run's under the next run's name") {
  auto directory = exec::RunDirectory::create().value();
  auto first = directory.files_for(1, "page=1").value();
  auto first_path = first.state_path();
  auto inode = inode_of(first_path);
  write(first_path, "page=2");
  CHECK(directory.collect(std::move(first), 100).state.value() == "page=2");
  CHECK_FALSE(fs::exists(first_path));
  auto second = directory.files_for(2, "").value();
  CHECK(second.state_path() != first_path);
  CHECK(inode_of(second.state_path()) == inode);
  CHECK(contents_of(second.state_path()).empty());
  auto third = directory.files_for(3, "page=3").value();
  CHECK(contents_of(third.state_path()) == "page=3");
}

TEST_CASE("a state file that a process still has open is never another run's") {
  auto directory = exec::RunDirectory::create().value();
  auto first = directory.files_for(1, "").value();
  int held = ::open(first.state_path().c_str(), O_WRONLY | O_CLOEXEC);  // as a process the run left behind
  REQUIRE(held >= 0);
  auto inode = inode_of(first.state_path());
  CHECK(directory.collect(std::move(first), 100).state.value().empty());
  auto second = directory.files_for(2, "page=2").value();
  CHECK(inode_of(second.state_path()) != inode);
  CHECK(::write(held, "late", 4) == 4);
  ::close(held);
  CHECK(contents_of(second.state_path()) == "page=2");
}

TEST_CASE("a state file the run linked elsewhere or replaced by a symbolic link is read, never another run's") {
  auto directory = exec::RunDirectory::create().value();
  auto outside = fs::temp_directory_path() / ("taskd-test-outside-" + std::to_string(::getpid()));
  auto run = directory.files_for(1, "").value();
  SUBCASE("a hard link") { fs::create_hard_link(run.state_path(), outside); }
  SUBCASE("a symbolic link") {
    write(outside, "");
    fs::remove(run.state_path());
    fs::create_symlink(outside, run.state_path());
  }
  write(outside, "kept");
  CHECK(directory.collect(std::move(run), 100).state.value() == "kept");
  auto next = directory.files_for(2, "page=2").value();
  CHECK(contents_of(outside) == "kept");
  CHECK(fs::is_regular_file(fs::symlink_status(next.state_path())));
  fs::remove(outside);
}

TEST_CASE("the status file is read and removed; a run that wrote none has an empty status line") {
  auto directory = exec::RunDirectory::create().value();
  auto quiet = directory.files_for(1, "").value();
  CHECK(directory.collect(std::move(quiet), 100).status_line.empty());
  auto talking = directory.files_for(2, "").value();
  auto status_path = talking.status_path();
  write(status_path, "fetched 3 pages\nall done\n");
  CHECK(directory.collect(std::move(talking), 100).status_line == "all done");
  CHECK_FALSE(fs::exists(status_path));
}

TEST_CASE("a state over the limit is an error, and its file still serves the next run, emptied") {
  auto directory = exec::RunDirectory::create().value();
  auto run = directory.files_for(1, "").value();
  write(run.state_path(), std::string(101, 'y'));
  auto inode = inode_of(run.state_path());
  auto left = directory.collect(std::move(run), 100);
  REQUIRE_FALSE(left.state);
  CHECK(left.state.error().message.find("101 bytes") != std::string::npos);
  auto next = directory.files_for(2, "").value();
  CHECK(inode_of(next.state_path()) == inode);
  CHECK(contents_of(next.state_path()).empty());
}

TEST_CASE("a run directory handed over is taken over only where taskd makes them, never through \"..\"") {
  auto directory = exec::RunDirectory::create().value();
  auto handed = directory.handed();
  auto name = fs::path(handed.path).filename().string();
  auto through = exec::RunDirectory::adopt({handed.path + "/../" + name, {}, 0});
  REQUIRE_FALSE(through.has_value());
  CHECK(through.error().message == handed.path + "/../" + name + " is not a run directory of taskd's");
  CHECK(fs::exists(handed.path));
}

namespace {

// Only root makes files of another user's.
const bool not_root = ::geteuid() != 0;
const exec::Credentials nobody{65534, 65534, {}};
const exec::Credentials daemon_user{1, 1, {}};

struct stat status_of(const std::string& path) {
  struct stat info {};
  REQUIRE(::lstat(path.c_str(), &info) == 0);
  return info;
}

}  // namespace

TEST_CASE("a user's ended run leaves its state file, emptied, to the user's next run, in the same directory" *
          doctest::skip(not_root)) {
  auto directory = exec::RunDirectory::create().value();
  auto first = directory.files_for(1, "page=1", &nobody).value();
  auto first_path = first.state_path();
  auto made = status_of(first_path);
  CHECK(made.st_uid == nobody.uid);
  CHECK((made.st_mode & 07777) == 0600);
  CHECK(contents_of(first_path) == "page=1");
  write(first_path, "page=2");
  // Holds the inode (its number is not reused) without opening the file.
  int path_only = ::open(first_path.c_str(), O_PATH | O_CLOEXEC);
  REQUIRE(path_only >= 0);
  CHECK(directory.collect(std::move(first), 100).state.value() == "page=2");
  CHECK_FALSE(fs::exists(first_path));

  auto second = directory.files_for(2, "page=3", &nobody).value();
  CHECK(fs::path(second.state_path()).parent_path() == fs::path(first_path).parent_path());
  auto reused = status_of(second.state_path());
  struct stat held {};
  REQUIRE(::fstat(path_only, &held) == 0);
  ::close(path_only);
  CHECK(held.st_nlink == 1);
  CHECK(reused.st_ino == made.st_ino);
  CHECK(reused.st_uid == nobody.uid);
  CHECK(contents_of(second.state_path()) == "page=3");
  SUBCASE("never another group's") {
    exec::Credentials other_group{nobody.uid, 1, {}};
    CHECK(directory.collect(std::move(second), 100).state.value() == "page=3");
    auto third = directory.files_for(3, "", &other_group).value();
    CHECK(status_of(third.state_path()).st_ino != made.st_ino);
    CHECK(status_of(third.state_path()).st_gid == 1);
  }
  SUBCASE("never one the user linked elsewhere or opened to others") {
    auto linked = fs::path(second.state_path()).parent_path() / "kept";
    fs::create_hard_link(second.state_path(), linked);
    CHECK(directory.collect(std::move(second), 100).state.value() == "page=3");
    auto third = directory.files_for(3, "", &nobody).value();
    CHECK(status_of(third.state_path()).st_ino != made.st_ino);
    ::chmod(third.state_path().c_str(), 0644);
    // Holds the inode (its number is not reused) without opening the file.
    int third_held = ::open(third.state_path().c_str(), O_PATH | O_CLOEXEC);
    REQUIRE(third_held >= 0);
    CHECK(directory.collect(std::move(third), 100).state.value().empty());
    auto fourth = directory.files_for(4, "", &nobody).value();
    struct stat removed {};
    REQUIRE(::fstat(third_held, &removed) == 0);
    ::close(third_held);
    CHECK(removed.st_nlink == 0);
    CHECK(status_of(fourth.state_path()).st_ino != removed.st_ino);
    CHECK((status_of(fourth.state_path()).st_mode & 07777) == 0600);
  }
}

TEST_CASE("a link or a directory not the user's alone in place of a user's directory is refused" *
          doctest::skip(not_root)) {
  auto directory = exec::RunDirectory::create().value();
  auto first = directory.files_for(1, "", &nobody).value();
  auto users = fs::path(first.state_path()).parent_path().parent_path();
  CHECK((status_of(users.string()).st_mode & 07777) == 0711);
  auto planted = users / ("u" + std::to_string(daemon_user.uid));
  auto elsewhere = users / "elsewhere";
  fs::create_directory(elsewhere);
  ::chown(elsewhere.c_str(), daemon_user.uid, daemon_user.gid);
  ::chmod(elsewhere.c_str(), 0700);
  uid_t planted_by = 0;
  SUBCASE("a symbolic link to a directory of the user's") { fs::create_directory_symlink(elsewhere, planted); }
  SUBCASE("a directory of another user's") {
    fs::create_directory(planted);
    planted_by = nobody.uid;
    ::chown(planted.c_str(), planted_by, nobody.gid);
    ::chmod(planted.c_str(), 0700);
  }
  SUBCASE("a directory of the user's that others can enter") {
    fs::create_directory(planted);
    planted_by = daemon_user.uid;
    ::chown(planted.c_str(), planted_by, daemon_user.gid);
    ::chmod(planted.c_str(), 0755);
  }
  auto refused = directory.files_for(2, "", &daemon_user);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find("cannot write the run files") != std::string::npos);
  CHECK(fs::is_empty(elsewhere));
  CHECK(status_of(planted.string()).st_uid == planted_by);
}

TEST_CASE("a user's state outlives a /tmp cleaner that removed taskd's own directory" * doctest::skip(not_root)) {
  auto directory = exec::RunDirectory::create().value();
  auto first = directory.files_for(1, "page=1", &nobody).value();
  write(first.state_path(), "page=2");
  auto removed = directory.handed().path;
  fs::remove_all(removed);
  CHECK(directory.collect(std::move(first), 100).state.value() == "page=2");
  CHECK(directory.handed().path != removed);
  CHECK(fs::is_directory(directory.handed().path));
  auto second = directory.files_for(2, "page=2", &nobody).value();
  CHECK(contents_of(second.state_path()) == "page=2");
}

TEST_CASE("the users' directories a /tmp cleaner left behind go with the run directory" *
          doctest::skip(not_root)) {
  fs::path users;
  fs::path fresh_users;
  {
    auto directory = exec::RunDirectory::create().value();
    auto first = directory.files_for(1, "", &nobody).value();
    auto other = directory.files_for(2, "", &daemon_user).value();
    users = fs::path(first.state_path()).parent_path().parent_path();
    directory.collect(std::move(first), 100);
    fs::remove_all(users / ("u" + std::to_string(nobody.uid)));
    auto again = directory.files_for(3, "", &nobody).value();
    fresh_users = fs::path(again.state_path()).parent_path().parent_path();
    CHECK(fresh_users != users);
    CHECK(fs::exists(other.state_path()));
  }
  CHECK_FALSE(fs::exists(users));
  CHECK_FALSE(fs::exists(fresh_users));
}
