// The process-wide table of named PackedFuncs.
#include <map>
#include <mutex>
#include <shared_mutex>

#include "anvil/runtime/packed_func.h"
#include "anvil/support/error.h"

namespace anvil {
namespace {

struct Registry {
  std::shared_mutex mutex;
  std::map<std::string, PackedFunc, std::less<>> functions;
};

// Built on first use, so registrations from static objects of any library find it ready.
Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

void register_global(const std::string& name, PackedFunc func, bool override_existing) {
  if (name.empty()) throw_error("cannot register a function with an empty name");
  if (!func.defined()) throw_error("cannot register a null function as '", name, "'");
  if (func.name() != name) func = func.with_name(name);
  Registry& r = registry();
  PackedFunc replaced;  // destroyed after the lock is released, see remove_global
  std::unique_lock lock(r.mutex);
  auto [it, inserted] = r.functions.try_emplace(name, func);
  if (inserted) return;
  if (!override_existing)
    throw_error("a function named '", name,
                "' is already registered (pass override_existing to replace it)");
  replaced = std::exchange(it->second, std::move(func));
}

std::optional<PackedFunc> find_global(std::string_view name) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  auto it = r.functions.find(name);
  if (it == r.functions.end()) return std::nullopt;
  return it->second;
}

PackedFunc get_global(std::string_view name) {
  std::optional<PackedFunc> func = find_global(name);
  if (!func) throw_error("no registered function named '", name, "'");
  return *std::move(func);
}

std::vector<std::string> list_globals() {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  std::vector<std::string> names;
  names.reserve(r.functions.size());
  for (const auto& entry : r.functions) names.push_back(entry.first);
  return names;
}

bool remove_global(std::string_view name) {
  Registry& r = registry();
  // The function is destroyed after the lock is released: its destructor may run arbitrary
  // code (e.g. unload a library) that must not happen under the registry lock.
  PackedFunc removed;
  {
    std::unique_lock lock(r.mutex);
    auto it = r.functions.find(name);
    if (it == r.functions.end()) return false;
    removed = std::move(it->second);
    r.functions.erase(it);
  }
  return true;
}

}  // namespace anvil
