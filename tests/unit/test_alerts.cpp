#include <doctest/doctest.h>

#include "core/alerts.hpp"
#include "core/mail.hpp"

using namespace taskd::core;

namespace {

NotifyFacts failure_of(std::string task, std::string reason) {
  return {.event = NotifyEvent::failed,
          .task = std::move(task),
          .run_id = 12,
          .status = RunStatus::failed,
          .exit_code = 1,
          .reason = std::move(reason),
          .attempt_no = 1,
          .at = from_unix_ms(0)};
}

// The headers of a mail: its lines up to the first empty one.
std::vector<std::string> headers_of(const std::string& mail) {
  std::vector<std::string> lines;
  std::size_t at = 0;
  while (true) {
    auto end = mail.find('\n', at);
    if (end == at || end == std::string::npos) return lines;
    lines.push_back(mail.substr(at, end - at));
    at = end + 1;
  }
}

}  // namespace

TEST_CASE("--mail-to takes addresses, each one address") {
  CHECK(parse_mail_to("ops@example.org").value() == std::vector<std::string>{"ops@example.org"});
  CHECK(parse_mail_to("a@x,b@y").value() == std::vector<std::string>{"a@x", "b@y"});
  for (std::string_view bad : {"", "ops", "@x", "a@", "a b@x", "a@x,", ",a@x", "a@x\nBcc: b@y", "a@x\r", "<a@x>",
                               "a@x;b@y", "\"a\"@x", "-f@x", "a@x\x7f"}) {
    CAPTURE(bad);
    auto parsed = parse_mail_to(bad);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().kind == ErrorKind::bad_input);
    CHECK(parsed.error().message.find('\n') == std::string::npos);
  }
}

TEST_CASE("nothing of a task's name, reason or host adds a header to its mail") {
  auto facts = failure_of("evil\nBcc: victim@example.org", "exit code 1\r\nX-Injected: yes");
  auto mail = notify_mail(facts, {"ops@example.org"}, "web1\nCc: other@example.org", "out\r\nX-Out: 1\n");
  auto headers = headers_of(mail);
  REQUIRE(headers.size() == 6);
  CHECK(headers[0] == "To: ops@example.org");
  CHECK(headers[1] == "Subject: taskd: task evil Bcc: victim@example.org failed on web1 Cc: other@example.org");
  for (const auto& header : headers) CHECK(header.find('\r') == std::string::npos);
  CHECK(mail.find("\r") == std::string::npos);
  CHECK(mail.find("Reason:     exit code 1\\x0d\\nX-Injected: yes\n") != std::string::npos);
  CHECK(mail.ends_with("Its output:\n\nout\\x0d\nX-Out: 1\n"));
}

TEST_CASE("a mail carries the output's last 4 KiB, from a whole character") {
  std::string output = std::string(5000, 'a') + "\xc3\xa9" + std::string(4095, 'b');
  auto mail = notify_mail(failure_of("t", "r"), {"a@x"}, "h", output);
  CHECK(mail.find("The last 4095 bytes of its output:\n\n" + std::string(4095, 'b') + "\n") != std::string::npos);
  CHECK(notify_mail(failure_of("t", "r"), {"a@x"}, "h", "").ends_with("The run wrote no output.\n"));
}

TEST_CASE("an alert URL is http or https with a host; its credentials never show") {
  CHECK(parse_alert_url("https://hc-ping.com/5f3a").value() == "https://hc-ping.com/5f3a");
  CHECK(parse_alert_url("HTTP://u:p@127.0.0.1:8080/x?y=1"));
  for (std::string_view bad : {"", "ftp://x/y", "file:///etc/passwd", "hc-ping.com/x", "http://", "http:///x",
                               "http://u:secret@/x", "http://:80/x", "http://x/a b", "http://x/\n"}) {
    CAPTURE(bad);
    auto parsed = parse_alert_url(bad);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().message.find("secret") == std::string::npos);
  }
  CHECK(masked_url("https://u:secret@example.org/p@x") == "https://***@example.org/p@x");
  CHECK(masked_url("https://example.org/p@x") == "https://example.org/p@x");
}

TEST_CASE("pings go to URL/start, URL and URL/fail, before the query") {
  CHECK(ping_target("https://hc-ping.com/abc", Ping::start) == "https://hc-ping.com/abc/start");
  CHECK(ping_target("https://hc-ping.com/abc", Ping::success) == "https://hc-ping.com/abc");
  CHECK(ping_target("https://hc-ping.com/abc/", Ping::failure) == "https://hc-ping.com/abc/fail");
  CHECK(ping_target("https://x/abc?rid=1", Ping::failure) == "https://x/abc/fail?rid=1");
}
