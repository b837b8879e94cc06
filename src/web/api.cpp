#include "web/api.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <memory>
#include <ranges>

#include "core/policy.hpp"
#include "ops/backfill.hpp"
#include "ops/change.hpp"
#include "ops/explain.hpp"
#include "ops/metrics.hpp"
#include "ops/preview.hpp"
#include "ops/runs.hpp"
#include "ops/status.hpp"
#include "ops/tasks.hpp"
#include "store/tasks.hpp"
#include "taskd_web_board_css.hpp"
#include "taskd_web_board_js.hpp"
#include "taskd_web_common_js.hpp"
#include "taskd_web_head_html.hpp"
#include "taskd_web_hosts_html.hpp"
#include "taskd_web_hosts_js.hpp"
#include "taskd_web_index_html.hpp"
#include "taskd_web_run_html.hpp"
#include "taskd_web_run_js.hpp"
#include "taskd_web_task_html.hpp"
#include "taskd_web_task_js.hpp"
#include "taskd_web_timeline_html.hpp"
#include "taskd_web_timeline_js.hpp"
#include "web/token.hpp"

namespace taskd::web {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;
using ops::Json;

constexpr std::string_view json_type = "application/json";
constexpr std::string_view api_prefix = "/api/v1/";

// A listing answers a page at a time: a million tasks are never one body.
struct Limits {
  std::int64_t fallback;
  std::int64_t most;
};
constexpr Limits task_page{500, 5000};
constexpr Limits run_page{20, 1000};        // history's default
constexpr Limits forecast_count{10, 1000};  // preview's default
constexpr std::int64_t backfill_max = 10'000;  // backfill's default

// Compact; a byte of a string that is not UTF-8 becomes U+FFFD, as --json prints it.
std::string dumped(const Json& document) { return document.dump(-1, ' ', false, Json::error_handler_t::replace); }

Response json_response(int status, const Json& document) {
  return {.status = status, .content_type = std::string(json_type), .body = dumped(document) + "\n"};
}

Response error_response(int status, std::string_view message) {
  return json_response(status, Json{{"error", message}});
}

int status_of(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage:
    case ErrorKind::bad_input: return 400;
    case ErrorKind::unavailable:
    case ErrorKind::busy: return 503;
    case ErrorKind::internal: return 500;
  }
  return 500;
}

Response error_response(const core::Error& error) { return error_response(status_of(error.kind), error.message); }

Response method_not_allowed(std::string_view allowed) {
  auto response = error_response(405, fmt::format("this path answers {} only", allowed));
  response.headers.emplace_back("Allow", allowed);
  return response;
}

bool reads(const Request& request) { return request.method == "GET" || request.method == "HEAD"; }

// The board: its pages, style and scripts, by their exact paths (no other
// name reaches them, so no path can climb out of them), the run page at
// /runs/ID for any ID in digits and the task page at /tasks/NAME for any
// NAME. A page is the head they all share, its title and script put in,
// then its main part.
struct Asset {
  std::string_view path;
  std::string_view content_type;
  std::string bytes;
};
constexpr std::string_view html_type = "text/html; charset=utf-8";
constexpr std::string_view script_type = "text/javascript; charset=utf-8";
constexpr std::string_view run_page_path = "/runs/";
constexpr std::string_view task_page_path = "/tasks/";

std::string page(std::string_view title, std::string_view script, std::string_view main) {
  std::string text(taskd_web_head_html);
  for (auto [mark, value] :
       {std::pair{std::string_view("@TITLE@"), title}, std::pair{std::string_view("@SCRIPT@"), script}})
    text.replace(text.find(mark), mark.size(), value);
  return text.append(main).append("</body>\n</html>\n");
}

const std::vector<Asset>& assets() {
  static const std::vector<Asset> all{
      {"/", html_type, page("taskd", "/board.js", taskd_web_index_html)},
      {"/timeline", html_type, page("taskd: timeline", "/timeline.js", taskd_web_timeline_html)},
      {"/hosts", html_type, page("taskd: hosts", "/hosts.js", taskd_web_hosts_html)},
      {run_page_path, html_type, page("taskd: run", "/run.js", taskd_web_run_html)},
      {task_page_path, html_type, page("taskd: task", "/task.js", taskd_web_task_html)},
      {"/board.css", "text/css; charset=utf-8", std::string(taskd_web_board_css)},
      {"/common.js", script_type, std::string(taskd_web_common_js)},
      {"/board.js", script_type, std::string(taskd_web_board_js)},
      {"/timeline.js", script_type, std::string(taskd_web_timeline_js)},
      {"/run.js", script_type, std::string(taskd_web_run_js)},
      {"/task.js", script_type, std::string(taskd_web_task_js)},
      {"/hosts.js", script_type, std::string(taskd_web_hosts_js)},
  };
  return all;
}

bool is_run_page(std::string_view path) {
  if (!path.starts_with(run_page_path)) return false;
  auto id = path.substr(run_page_path.size());
  return !id.empty() && id.size() <= 18 && std::ranges::all_of(id, [](char c) { return c >= '0' && c <= '9'; });
}

const Asset* asset_at(std::string_view path) {
  if (path.starts_with(run_page_path)) {
    if (!is_run_page(path)) return nullptr;
    path = run_page_path;
  } else if (path.starts_with(task_page_path)) {
    if (path.size() == task_page_path.size()) return nullptr;
    path = task_page_path;
  }
  auto found = std::ranges::find(assets(), path, &Asset::path);
  return found == assets().end() ? nullptr : &*found;
}

std::string_view parameter(const Request& request, const std::string& name) {
  auto found = request.query.find(name);
  return found == request.query.end() ? std::string_view() : std::string_view(found->second);
}

// ?NAME=N (limit, count, max): from 1 to the most; absent, the fallback.
Result<std::int64_t> number_of(const Request& request, const std::string& name, Limits limits) {
  auto text = parameter(request, name);
  if (text.empty()) return limits.fallback;
  std::int64_t number = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || end != text.data() + text.size() || number < 1 || number > limits.most)
    return fail(ErrorKind::bad_input, fmt::format("{}=\"{}\": a number from 1 to {}", name, text, limits.most));
  return number;
}

Result<std::int64_t> limit_of(const Request& request, Limits limits) { return number_of(request, "limit", limits); }

// The filter of `taskd list` from ?name=GLOB&group=&owner=&host=&state=&after=NAME&limit=N
// (host: --on-host).
Result<store::TaskFilter> task_filter_of(const Request& request) {
  store::TaskFilter filter{.group = std::string(parameter(request, "group")),
                           .owner = std::string(parameter(request, "owner")),
                           .on_host = std::string(parameter(request, "host")),
                           .name_glob = std::string(parameter(request, "name")),
                           .after = std::string(parameter(request, "after"))};
  if (auto state = parameter(request, "state"); !state.empty()) {
    auto condition = core::parse_condition(state);
    if (!condition) return fail(ErrorKind::bad_input, "state: " + condition.error().message);
    filter.condition = *condition;
  }
  filter.limit = TRY(limit_of(request, task_page));
  return filter;
}

// ?before=ID: a run's id, the last of the page before.
Result<std::int64_t> before_of(const Request& request) {
  auto text = parameter(request, "before");
  if (text.empty()) return 0;
  std::int64_t id = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (error != std::errc() || end != text.data() + text.size() || id < 1)
    return fail(ErrorKind::bad_input, fmt::format("before=\"{}\": a run's id", text));
  return id;
}

// The filter of `taskd history` from ?status=a,b&trigger=&since=&until=&limit=N,
// and ?before=ID for the page after run ID.
Result<store::RunFilter> run_filter_of(const Request& request, core::Time now) {
  store::RunFilter filter{.limit = TRY(limit_of(request, run_page)), .before = TRY(before_of(request))};
  for (auto name : std::views::split(parameter(request, "status"), ',')) {
    if (name.empty()) continue;
    auto status = core::parse_run_status(std::string_view(name.begin(), name.end()));
    if (!status) return fail(ErrorKind::bad_input, "status: " + status.error().message);
    filter.statuses.push_back(*status);
  }
  if (auto trigger_name = parameter(request, "trigger"); !trigger_name.empty()) {
    auto trigger = core::parse_trigger(trigger_name);
    if (!trigger) return fail(ErrorKind::bad_input, "trigger: " + trigger.error().message);
    filter.trigger = *trigger;
  }
  filter.since = TRY(core::time_or_ago(parameter(request, "since"), "since", now));
  filter.until = TRY(core::time_or_ago(parameter(request, "until"), "until", now));
  return filter;
}

// A JSON array of what `walk` visits, each element as `to_json` makes it.
template <class Walk, class ToJson>
Result<std::string> json_array(Walk walk, ToJson to_json) {
  std::string body = "[";
  TRY(walk([&](const auto& item) -> Result<void> {
    if (body.size() > 1) body += ',';
    body += dumped(to_json(item));
    return {};
  }));
  body += "]\n";  // in place: a page of 5 000 tasks is megabytes
  return body;
}

Response json_body(Result<std::string> body) {
  if (!body) return error_response(body.error());
  return {.status = 200, .content_type = std::string(json_type), .body = std::move(*body)};
}

Response no_task(std::string_view name) { return error_response(404, fmt::format("no task named \"{}\"", name)); }

// Where a page of tasks is among all the filter selects, for the board's
// "501-1000 of 12000": X-Total-Count, all of them, and X-Offset, those
// named up to ?after= (the pages before). Only with ?total=1: the counts
// read the whole index (some 40 ms at a million tasks), which a client
// walking the pages need not pay at each.
using Headers = std::vector<std::pair<std::string, std::string>>;
Result<Headers> place_headers(store::Database& db, const Request& request, store::TaskFilter filter) {
  auto asked = parameter(request, "total");
  if (asked.empty()) return Headers{};
  if (asked != "1") return fail(ErrorKind::bad_input, fmt::format("total=\"{}\": 1 or none", asked));
  auto after = TRY(store::count_tasks(db, filter));
  auto total = after;
  if (!filter.after.empty()) {
    filter.after.clear();
    total = TRY(store::count_tasks(db, filter));
  }
  return Headers{{"X-Total-Count", std::to_string(total)}, {"X-Offset", std::to_string(total - after)}};
}

Response list_tasks(store::Database& db, const Request& request) {
  auto filter = task_filter_of(request);
  if (!filter) return error_response(filter.error());
  auto place = place_headers(db, request, *filter);
  if (!place) return error_response(place.error());
  auto response = json_body(json_array(
      [&](const store::TaskVisitor& visit) { return ops::list_tasks(db, *filter, ops::Detail::full, visit); },
      ops::stored_task_json));
  if (response.status == 200) response.headers = std::move(*place);
  return response;
}

Response show_task(store::Database& db, std::string_view name) {
  auto exists = ops::task_exists(db, name);
  if (!exists) return error_response(exists.error());
  if (!*exists) return no_task(name);
  auto shown = ops::show_task(db, name);
  return shown ? json_response(200, ops::shown_task_json(*shown)) : error_response(shown.error());
}

Response list_runs(store::Database& db, const Request& request, core::Time now) {
  auto filter = run_filter_of(request, now);
  if (!filter) return error_response(filter.error());
  auto name = parameter(request, "task");
  if (!name.empty()) {
    auto exists = ops::task_exists(db, name);
    if (!exists) return error_response(exists.error());
    if (!*exists) return no_task(name);
  }
  return json_body(json_array(
      [&](const store::RunVisitor& visit) { return ops::for_each_run_of(db, name, *filter, "history", visit); },
      ops::run_json));
}

// How many runs of each task recent-runs gives (?runs=N).
constexpr Limits runs_per_task{20, 100};

// The tasks named, each with its last `per_task` runs, newest first, as
// [{"task": NAME, "runs": [...]}, ...].
Result<std::string> recent_runs_body(store::Database& db, const std::vector<std::string>& names,
                                     std::int64_t per_task) {
  std::string body = "[";
  for (const auto& name : names) {
    Json runs = Json::array();
    TRY(ops::for_each_run_of(db, name, {.limit = per_task}, "history", [&](const store::RunRecord& run) -> Result<void> {
      runs.push_back(ops::run_json(run));
      return {};
    }));
    if (body.size() > 1) body += ',';
    body += dumped(Json{{"task", name}, {"runs", std::move(runs)}});
  }
  body += "]\n";
  return body;
}

// GET recent-runs?FILTERS&runs=N: the page of tasks the filters select (as
// GET tasks), each with its last N runs: the board's strips, whichever page
// it shows (the newest runs of all tasks leave out the tasks that ran less).
Response recent_runs(store::Database& db, const Request& request) {
  auto filter = task_filter_of(request);
  if (!filter) return error_response(filter.error());
  auto per_task = number_of(request, "runs", runs_per_task);
  if (!per_task) return error_response(per_task.error());
  std::vector<std::string> names;
  auto listed = ops::list_tasks(db, *filter, ops::Detail::headline, [&](const store::StoredTask& task) -> Result<void> {
    names.push_back(store::readable(task).definition.name);
    return {};
  });
  if (!listed) return error_response(listed.error());
  return json_body(recent_runs_body(db, names, *per_task));
}

// "runs/ID/output": run ID's output.
Response run_output(store::Database& db, std::string_view path) {
  auto id_text = path.substr(0, path.find('/'));
  std::int64_t id = 0;
  auto [end, error] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
  if (error != std::errc() || end != id_text.data() + id_text.size() || path != fmt::format("{}/output", id_text))
    return error_response(404, "no such path");
  auto shown = ops::find_run_output(db, id);
  if (!shown) return error_response(shown.error());
  if (!*shown) return error_response(404, fmt::format("no run {}", id));
  return json_response(200, ops::run_output_json(**shown));
}

// GET tasks/NAME/forecast?count=N&from=T: as `preview NAME --json [--count N] [--from T]`.
Response forecast(store::Database&, const core::Task& task, const Request& request, core::Time now) {
  auto count = number_of(request, "count", forecast_count);
  if (!count) return error_response(count.error());
  auto from = ops::preview_from(parameter(request, "from"), "from", now);
  if (!from) return error_response(from.error());
  return json_body(json_array(
      [&](const auto& visit) { return ops::for_each_start(task, *from, *count, visit); }, ops::start_json));
}

// GET tasks/NAME/explain?at=T: as `explain NAME --json [--at T]`.
Response explain(store::Database& db, const core::Task& task, const Request& request, core::Time now) {
  auto asked = ops::time_asked(parameter(request, "at"), "at", task.definition, now);
  if (!asked) return error_response(asked.error());
  auto explanation = ops::explain_task(db, task, *asked, now, {});
  return explanation ? json_response(200, ops::explanation_json(task, *explanation, now))
                     : error_response(explanation.error());
}

// A view of one task, at tasks/NAME/VIEW.
struct View {
  std::string_view name;
  Response (*answer)(store::Database& db, const core::Task& task, const Request& request, core::Time now);
};
constexpr View views[] = {
    {"forecast", forecast},
    {"explain", explain},
};

// "tasks/NAME" or "tasks/NAME/VIEW" (path without "tasks/"). A name may hold
// a slash: "a/explain" is the view of task "a" when there is one, else the
// task called "a/explain".
Response task_path(store::Database& db, std::string_view path, const Request& request, core::Time now) {
  auto slash = path.rfind('/');
  const auto* view =
      slash == std::string_view::npos ? std::end(views) : std::ranges::find(views, path.substr(slash + 1), &View::name);
  if (view == std::end(views)) return show_task(db, path);
  auto task = ops::find_task(db, path.substr(0, slash));
  if (!task) return error_response(task.error());
  if (!*task) return show_task(db, path);
  return view->answer(db, **task, request, now);
}

// POST tasks/NAME/backfill?from=T&until=T[&max=N]: as `backfill NAME --json`.
Response backfill(store::Database& db, std::string_view name, const Request& request, core::Time now) {
  auto window = [&]() -> Result<core::BackfillWindow> {
    auto from = TRY(core::time_or_ago(parameter(request, "from"), "from", now));
    auto until = TRY(core::time_or_ago(parameter(request, "until"), "until", now));
    if (!from || !until) return fail(ErrorKind::bad_input, "backfill: give from=T and until=T (an RFC 3339 time, or a duration ago: 7d)");
    auto max = TRY(number_of(request, "max", {backfill_max, std::numeric_limits<std::int64_t>::max()}));
    return core::BackfillWindow{*from, *until, static_cast<std::size_t>(max)};
  }();
  if (!window) return error_response(window.error());
  auto backfilled = ops::backfill(db, {.name = std::string(name), .window = *window}, now);
  return backfilled ? json_response(200, ops::backfilled_json(*backfilled)) : error_response(backfilled.error());
}

Response hosts(store::Database& db, core::Time now) {
  auto read = ops::read_hosts(db);
  return read ? json_response(200, ops::hosts_json(*read, now)) : error_response(read.error());
}

// /metrics: the text of `taskd metrics`, sent as it is written (at a
// million tasks it is many megabytes).
Response metrics(store::Database db) {
  auto opened = std::make_shared<store::Database>(std::move(db));
  return {.status = 200,
          .content_type = "text/plain; version=0.0.4; charset=utf-8",
          .stream = [opened](const auto& write) { return ops::write_metrics_text(*opened, write); }};
}

// The actions on a task: POST tasks/NAME/ACTION.
struct Action {
  std::string_view name;
  std::optional<ops::Change> change;  // none: trigger, or backfill
};
constexpr std::string_view backfill_action = "backfill";
constexpr Action actions[] = {
    {"trigger", std::nullopt},
    {"pause", ops::Change::pause},
    {"resume", ops::Change::resume},
    {"enable", ops::Change::enable},
    {backfill_action, std::nullopt},
};

Response perform(store::Database& db, std::string_view name, const Action& action, const Request& request,
                 const sched::Clock& clock) {
  auto exists = ops::task_exists(db, name);
  if (!exists) return error_response(exists.error());
  if (!*exists) return no_task(name);
  if (action.name == backfill_action) return backfill(db, name, request, clock.now());
  if (!action.change) {
    auto triggered = ops::trigger_task(db, name, false, clock);
    return triggered ? json_response(200, ops::triggered_json(*triggered)) : error_response(triggered.error());
  }
  auto outcomes = ops::change_tasks(db, {.names = {std::string(name)}}, *action.change, clock);
  return outcomes ? json_response(200, ops::outcomes_json(*outcomes, *action.change)) : error_response(outcomes.error());
}

}  // namespace

Response Api::unauthorized() {
  auto response = error_response(401, "this needs the token: Authorization: Bearer TOKEN");
  response.headers.emplace_back("WWW-Authenticate", "Bearer");
  return response;
}

Response Api::handle(const Request& request) const {
  try {
    return route(request);
  } catch (const std::exception& e) {
    return error_response(500, e.what());
  }
}

Response Api::route(const Request& request) const {
  std::string_view path = request.path;
  if (path.starts_with(api_prefix)) {
    path.remove_prefix(api_prefix.size());
    if (request.method == "POST") return act(request, path);
    if (!reads(request)) return method_not_allowed("GET, HEAD, POST");
    if (!may_read(request)) return unauthorized();
    return read_api(request, path);
  }
  if (path == "/metrics") {
    if (!reads(request)) return method_not_allowed("GET, HEAD");
    if (!may_read(request)) return unauthorized();
    auto db = databases_.to_read();
    return db ? metrics(std::move(*db)) : error_response(db.error());
  }
  if (path == "/healthz") {
    if (!reads(request)) return method_not_allowed("GET, HEAD");
    auto db = databases_.to_read();
    return db ? json_response(200, Json{{"status", "ok"}}) : error_response(503, db.error().message);
  }
  const auto* asset = asset_at(path);
  if (!asset) return error_response(404, "no such path");
  if (!reads(request)) return method_not_allowed("GET, HEAD");
  return {.status = 200, .content_type = std::string(asset->content_type), .body = asset->bytes};
}

bool Api::may_read(const Request& request) const {
  return !access_.for_reads || (access_.token && same_token(bearer_token(request.authorization), *access_.token));
}

Response Api::read_api(const Request& request, std::string_view path) const {
  auto db = databases_.to_read();
  if (!db) return error_response(db.error());
  if (path == "tasks") return list_tasks(*db, request);
  if (path.starts_with("tasks/") && path.size() > 6) return task_path(*db, path.substr(6), request, clock_.now());
  if (path == "hosts") return hosts(*db, clock_.now());
  if (path == "runs") return list_runs(*db, request, clock_.now());
  if (path == "recent-runs") return recent_runs(*db, request);
  if (path.starts_with("runs/")) return run_output(*db, path.substr(5));
  return error_response(404, "no such path");
}

Response Api::act(const Request& request, std::string_view path) const {
  if (!access_.token)
    return error_response(403, "read-only: the board was started without a token file, which actions need");
  if (!same_token(bearer_token(request.authorization), *access_.token)) return unauthorized();
  auto slash = path.rfind('/');
  if (!path.starts_with("tasks/") || slash <= 6 || slash == std::string_view::npos)
    return method_not_allowed("GET, HEAD");
  auto found = std::ranges::find(actions, path.substr(slash + 1), &Action::name);
  if (found == std::end(actions)) return error_response(404, "no such action");
  auto db = databases_.to_change();
  if (!db) return error_response(db.error());
  return perform(*db, path.substr(6, slash - 6), *found, request, clock_);
}

}  // namespace taskd::web
