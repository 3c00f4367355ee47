// The two kinds of failure: user errors (bad input) and internal errors (bugs).
#pragma once

#include <stdexcept>
#include <string>

#include "anvil/support/str_cat.h"

namespace anvil {

// A user error: a bad model, flag, file or shape. The message is one line and
// names the culprit; the CLI prints it as "anvil: error: <message>".
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A broken invariant inside anvil: a bug, reported with file and line.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Throws anvil::Error with the concatenation of args.
template <typename... Args>
[[noreturn]] void throw_error(const Args&... args) {
  throw Error(str_cat(args...));
}

namespace detail {
[[noreturn]] void internal_check_failed(const char* file, int line, const char* condition,
                                        const std::string& message);
}  // namespace detail

}  // namespace anvil

// Checks an invariant that only a bug in anvil can break.
#define ANVIL_ICHECK(cond, ...)                                                                \
  do {                                                                                         \
    if (!(cond)) [[unlikely]]                                                                  \
      ::anvil::detail::internal_check_failed(__FILE__, __LINE__, #cond,                        \
                                             ::anvil::str_cat("" __VA_OPT__(, ) __VA_ARGS__)); \
  } while (0)
