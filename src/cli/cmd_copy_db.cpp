// `taskd copy-db --from SRC --to DST [--merge]`: tasks, their state and
// their history from one store into another (a SQLite file to a server is
// the path of a user who grows), in one transaction on the destination.
#include <fmt/format.h>
#include <memory>
#include <system_error>

#include "cli/context.hpp"
#include "cli/json.hpp"
#include "store/copy.hpp"

namespace taskd::cli {
namespace {

namespace fs = std::filesystem;
using core::ErrorKind;
using core::fail;
using core::Result;

struct CopyOptions {
  std::string from;
  std::string to;
  bool merge = false;
};

bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  return fs::equivalent(a, b, error);
}

// What can be said before any database is opened, so that a mistake
// creates no destination file.
Result<void> check_locations(const CopyOptions& options) {
  if (options.from == options.to || (!store::is_server_uri(options.from) && same_file(options.from, options.to)))
    return fail(ErrorKind::usage, fmt::format("copy-db: --from and --to name the same database ({})",
                                              store::without_password(options.from)));
  std::error_code error;  // a path that cannot be looked at is no database either
  if (!store::is_server_uri(options.from) && !fs::exists(options.from, error))
    return fail(ErrorKind::bad_input, fmt::format("copy-db --from: no database at {}", options.from));
  return {};
}

Result<void> copy_db(const Context& context, const CopyOptions& options) {
  TRY(check_locations(options));
  store::OpenOptions open{.if_missing = store::IfMissing::use_empty, .state_dir = context.state_dir};
  auto from = TRY(store::Database::open(options.from, open));
  // copy_database looks again under the source's lock; this first look
  // spares a new destination from being created for nothing.
  TRY(store::check_copy_source(from));
  open.if_missing = store::IfMissing::create;
  auto to = TRY(store::Database::open(options.to, open));
  auto copied = TRY(store::copy_database(from, to, options.merge));
  if (copied.texts_repaired > 0)
    fmt::print(stderr,
               "taskd: warning: copy-db: {} text{} held bytes that are not UTF-8, which {} refuses; copied with "
               "U+FFFD in place of each such byte\n",
               copied.texts_repaired, copied.texts_repaired == 1 ? "" : "s", to.name());
  if (context.json) {
    print_json(Json{{"from", from.name()}, {"to", to.name()}, {"tasks", copied.tasks}, {"runs", copied.runs},
                    {"groups", copied.groups}});
    return {};
  }
  fmt::print("copied {} task{}, {} run{} and {} group cap{} from {} to {}\n", copied.tasks,
             copied.tasks == 1 ? "" : "s", copied.runs, copied.runs == 1 ? "" : "s", copied.groups,
             copied.groups == 1 ? "" : "s", from.name(), to.name());
  return {};
}

}  // namespace

void add_copy_db_command(CLI::App& app, Context& context, Action& action) {
  auto options = std::make_shared<CopyOptions>();
  auto* command = app.add_subcommand(
      "copy-db", "Copy the tasks, their state and history from one database into another, in one transaction");
  command->add_option("--from", options->from, "The database to copy: a file or a postgresql:// URI")->required();
  command->add_option("--to", options->to, "The database to copy into, created if missing")->required();
  command->add_flag("--merge", options->merge, "Add to a database that has tasks (no name may be on both sides)");
  command->callback([&context, &action, options] { action = [&context, options] { return copy_db(context, *options); }; });
}

}  // namespace taskd::cli
