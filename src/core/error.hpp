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
#define TRY(...)                                                           \
  __extension__({                                                          \
    auto&& try_result_ = (__VA_ARGS__);                                    \
    if (!try_result_) return std::unexpected(std::move(try_result_).error()); \
    ::taskd::core::detail::value_of(std::move(try_result_));               \
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
