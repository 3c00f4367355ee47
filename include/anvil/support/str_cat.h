// Building messages from mixed values, for errors and logs.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace anvil {

// Prints a vector as "[a, b, c]", the way shapes appear in every message.
template <typename T>
std::ostream& operator<<(std::ostream& os, const std::vector<T>& items) {
  os << '[';
  for (size_t i = 0; i < items.size(); ++i) os << (i ? ", " : "") << items[i];
  return os << ']';
}

// Concatenates the streamed form of every argument.
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

}  // namespace anvil
