#pragma once

namespace taskd::cli {

// The whole program: parses argv, runs one command, returns the exit code of
// SPEC.md. Errors print one line, "taskd: error: …", to stderr.
int taskd_main(int argc, char** argv);

}  // namespace taskd::cli
