#pragma once
// Errors are values inside taskd; main maps their kind to an exit code.
#include <expected>
#include <string>

namespace taskd::core {

enum class ErrorKind {
  usage,        // the command line is wrong (exit 2)
  bad_input,    // a malformed schedule, duration, file or name (exit 65)
  unavailable,  // the database is locked, unreadable or unsafe (exit 69)
  busy,         // a lock another session of a server held past the lock timeout: look again later (exit 69)
  internal,     // a bug or an unexpected system failure (exit 70)
};

struct Error {
  ErrorKind kind;
  std::string message;
};

template <class T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> fail(ErrorKind kind, std::string message) {
  return std::unexpected(Error{kind, std::move(message)});
}

// Passes an error on: evaluates `expr`, a Result; returns its error from
// the enclosing function (or lambda) when it holds one, else yields its
// value (nothing for a Result<void>). `auto tasks = TRY(list_tasks(db));`
// The statement expression is GCC's (and Clang's) extension.
#define TRY(...) TRY_WITH_(TRY_NAME_(try_result_, __COUNTER__), __VA_ARGS__)
#define TRY_NAME_(prefix, counter) TRY_PASTE_(prefix, counter)
#define TRY_PASTE_(prefix, counter) prefix##counter
// A name of its own for each TRY: one may sit inside another's lambda.
#define TRY_WITH_(result, ...)                                             \
  __extension__({                                                          \
    auto&& result = (__VA_ARGS__);                                         \
    if (!result) return std::unexpected(std::move(result).error());        \
    ::taskd::core::detail::value_of(std::move(result));                    \
  })

namespace detail {
template <class T>
T value_of(Result<T>&& result) {
  return std::move(*result);
}
inline void value_of(Result<void>&&) {}
}  // namespace detail

// The process exit code SPEC.md assigns to an error kind.
constexpr int exit_code(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage: return 2;
    case ErrorKind::bad_input: return 65;
    case ErrorKind::unavailable:
    case ErrorKind::busy: return 69;
    case ErrorKind::internal: return 70;
  }
  return 70;
}

}  // namespace taskd::core
