#include "anvil/support/error.h"

namespace anvil::detail {

void internal_check_failed(const char* file, int line, const char* condition,
                           const std::string& message) {
  std::string text = str_cat("internal error (a bug in anvil, please report it): ", file, ":", line,
                             ": check '", condition, "' failed");
  if (!message.empty()) text += ": " + message;
  throw InternalError(text);
}

}  // namespace anvil::detail
