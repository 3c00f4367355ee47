// Where the model tests find the networks export_models.py wrote: $ANVIL_MODEL_CACHE, else the
// build tree's cache (ANVIL_MODEL_CACHE_DEFAULT, set by CMake).
#pragma once

#include <cstdlib>
#include <filesystem>

namespace anvil::testing {

inline std::filesystem::path model_cache() {
  const char* env = std::getenv("ANVIL_MODEL_CACHE");
  if (env != nullptr && *env != '\0') return env;
  return ANVIL_MODEL_CACHE_DEFAULT;
}

}  // namespace anvil::testing
