#pragma once
// Executing taskd's binary again in place (kill -USR2 to `taskd run` or
// `taskd work`), so that an upgrade of the package takes effect without a
// restart. The pid stays, and with it the workers row's identity and the
// children: the new image takes over the runs in flight (see handover.hpp).
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace taskd::exec {

// What to execute again: the path of the binary this process was started
// from and its command line as given.
struct Image {
  std::string path;
  std::vector<std::string> argv;
};

// This process's image: /proc/self/exe's path as read now (a package
// upgrade renames a new binary over that path, and /proc/self/exe would
// then name the old, deleted inode, " (deleted)"), else argv[0].
Image this_image(std::vector<std::string> argv);

// Whether `image` takes over runs handed over as this binary hands them:
// it answers `--handover-format` with this one's format within a second or
// two. False for a binary from before hand-overs or of another format; an
// error when it cannot be executed.
core::Result<bool> takes_handover(const Image& image);

// Replaces this process with `image`, with the same environment plus, when
// given, $TASKD_ADOPT_FD naming `record` (a sealed memfd, see seal_record),
// which is kept across execve with `kept`; returns only when it could not,
// with why, after putting everything back: `record` closed, the variable
// gone, `kept` close-on-exec again.
core::Error execute_again(const Image& image, std::optional<int> record, std::span<const int> kept);

}  // namespace taskd::exec
