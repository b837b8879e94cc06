#include "store/location.hpp"

#include <fmt/format.h>
#include <libpq-fe.h>

#include <algorithm>

namespace taskd::store {
namespace {

constexpr auto npos = std::string_view::npos;
// What libpq skips between keyword=value pairs: isspace() in the C locale.
constexpr std::string_view spaces = " \t\n\v\f\r";

char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, {}, ascii_lower, ascii_lower);
}

enum class Letters { exact, any_case };

// The length of `location`'s URI scheme with its "//"; 0: none. libpq reads
// only the lower-case ones (it compares with strncmp).
std::size_t scheme_length(std::string_view location, Letters letters) {
  for (std::string_view scheme : {"postgresql://", "postgres://"}) {
    auto head = location.substr(0, scheme.size());
    if (letters == Letters::exact ? head == scheme : equal_ignoring_case(head, scheme)) return scheme.size();
  }
  return 0;
}

bool is_keyword_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Whether `location` begins as libpq's keyword=value pairs do: a word, then
// "=" (spaces allowed between). Every string libpq reads as such pairs does;
// a path such as /srv/a=b/taskd.db does not.
bool begins_with_keyword(std::string_view location) {
  auto start = std::min(location.find_first_not_of(spaces), location.size());
  auto end = start;
  while (end < location.size() && is_keyword_char(location[end])) ++end;
  auto next = location.find_first_not_of(spaces, end);
  return end > start && next != npos && location[next] == '=';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = ascii_lower(c);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// `text` with its %XX sequences decoded, as libpq decodes a URI's parts; a
// malformed one stays as it is.
std::string percent_decoded(std::string_view text) {
  std::string out;
  for (std::size_t at = 0; at < text.size(); ++at) {
    int high = text[at] == '%' && at + 2 < text.size() ? hex_value(text[at + 1]) : -1;
    int low = high >= 0 ? hex_value(text[at + 2]) : -1;
    if (low < 0) {
      out += text[at];
    } else {
      out += static_cast<char>(high * 16 + low);
      at += 2;
    }
  }
  return out;
}

// Whether `key` names the password or sslpassword, percent-encoded or not,
// in any case. libpq takes only the lower-case names and refuses the others,
// but its message and taskd's show the string.
bool is_secret_key(std::string_view key) {
  auto name = percent_decoded(key);
  return equal_ignoring_case(name, "password") || equal_ignoring_case(name, "sslpassword");
}

struct Secrets {
  std::vector<Span> spans;
  // A URI whose password's end is unclear: its spans are all of it past the scheme.
  bool unclear = false;
};

void add_span(std::vector<Span>& spans, std::size_t begin, std::size_t end) {
  if (end > begin) spans.push_back({begin, end - begin});
}

// A URI's secrets, read as libpq reads it (conninfo_uri_parse_options): the
// user name and password end at the first '@', unless a '/' comes first;
// the query begins at the next '?', its parameters end at '&' and their keys
// at the first '='. An '@' past the user name and password, which libpq
// would take for part of a host, a port, a database's name or a key, says
// that a password held a '/' or '@' unencoded.
Secrets uri_secrets(std::string_view uri, std::size_t authority) {
  Secrets found;
  auto rest = authority;
  if (auto at = uri.find_first_of("@/", authority); at != npos && uri[at] == '@') {
    if (auto colon = uri.find(':', authority); colon < at) add_span(found.spans, colon + 1, at);
    rest = at + 1;
  }
  auto query = std::min(uri.find('?', rest), uri.size());
  found.unclear = uri.substr(rest, query - rest).find('@') != npos;
  for (auto begin = query + 1; begin < uri.size();) {
    auto end = std::min(uri.find('&', begin), uri.size());
    auto parameter = uri.substr(begin, end - begin);
    auto equals = parameter.find('=');
    auto key = parameter.substr(0, equals);
    if (key.find('@') != npos) found.unclear = true;
    if (equals != npos && is_secret_key(key)) add_span(found.spans, begin + equals + 1, end);
    begin = end + 1;
  }
  if (found.unclear) found.spans = {{authority, uri.size() - authority}};
  return found;
}

// The end of the value that begins at `begin` in keyword=value pairs, read
// as libpq reads it (conninfo_parse): a quoted one at its closing quote,
// another at the next space; a backslash takes the next character as it is.
// npos: a quote never closed.
std::size_t value_end(std::string_view text, std::size_t begin) {
  bool quoted = text[begin] == '\'';
  for (auto at = begin + (quoted ? 1 : 0); at < text.size(); ++at) {
    char c = text[at];
    if (c == '\\') {
      ++at;
    } else if (quoted ? c == '\'' : spaces.find(c) != npos) {
      return quoted ? at + 1 : at;
    }
  }
  return quoted ? npos : text.size();
}

// The secrets of keyword=value pairs, read as libpq reads them: a keyword
// ends at "=" or a space, spaces around "=" are skipped, the value is
// quoted or not (the secret is what is between the quotes). From a pair
// libpq cannot read on, all of it.
Secrets keyword_secrets(std::string_view text) {
  Secrets found;
  for (auto at = text.find_first_not_of(spaces); at != npos;) {
    auto key_end = std::min(text.find_first_of("= \t\n\v\f\r", at), text.size());
    auto equals = text.find_first_not_of(spaces, key_end);
    if (equals == npos || text[equals] != '=') {
      add_span(found.spans, at, text.size());
      break;
    }
    auto value = text.find_first_not_of(spaces, equals + 1);
    if (value == npos) break;                         // the last value is empty
    std::size_t quote = text[value] == '\'' ? 1 : 0;  // a quoted value's quotes stay
    auto end = value_end(text, value);
    if (end == npos) {
      add_span(found.spans, value + quote, text.size());
      break;
    }
    if (is_secret_key(text.substr(at, key_end - at))) add_span(found.spans, value + quote, end - quote);
    at = text.find_first_not_of(spaces, end);
  }
  return found;
}

Secrets find_secrets(std::string_view location) {
  if (auto scheme = scheme_length(location, Letters::any_case)) return uri_secrets(location, scheme);
  if (begins_with_keyword(location)) return keyword_secrets(location);
  return {};
}

void replace_all(std::string& text, std::string_view what, std::string_view with) {
  if (what.empty()) return;
  for (auto at = text.find(what); at != npos; at = text.find(what, at + with.size()))
    text.replace(at, what.size(), with);
}

// libpq's complaint about `location`, on one line and with what it quotes of
// a secret hidden: it quotes the whole string (an IPv6 address it cannot
// read) or one part of it (a malformed percent-encoding, maybe the password's).
std::string hidden_in(std::string message, std::string_view location) {
  while (!message.empty() && spaces.find(message.back()) != npos) message.pop_back();
  replace_all(message, location, without_password(location));
  for (auto span : secret_spans(location))
    replace_all(message, fmt::format("\"{}\"", location.substr(span.offset, span.size)), "\"****\"");
  return message;
}

}  // namespace

bool is_server_uri(std::string_view location) {
  return scheme_length(location, Letters::any_case) > 0 || begins_with_keyword(location);
}

std::vector<Span> secret_spans(std::string_view location) { return find_secrets(location).spans; }

std::string without_password(std::string_view location) {
  std::string shown(location);
  auto spans = secret_spans(location);
  for (auto span = spans.rbegin(); span != spans.rend(); ++span) shown.replace(span->offset, span->size, "****");
  return shown;
}

core::Result<void> check_server_location(const std::string& location) {
  auto refuse = [&](std::string_view why) {
    return core::fail(core::ErrorKind::usage, fmt::format("database {}: {}", without_password(location), why));
  };
  if (scheme_length(location, Letters::exact) == 0 && scheme_length(location, Letters::any_case) > 0)
    return refuse("libpq reads a URI only with its scheme in lower case, postgresql:// or postgres://");
  if (find_secrets(location).unclear)
    return refuse(
        "in a URI, an '@' or '/' in the user name or password, and an '@' in a host or database name, "
        "must be percent-encoded (%40, %2F)");
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(location.c_str(), &error);
  if (!options) {
    std::string message = error ? error : "out of memory";
    PQfreemem(error);
    return refuse(hidden_in(message, location));
  }
  PQconninfoFree(options);
  return {};
}

}  // namespace taskd::store
