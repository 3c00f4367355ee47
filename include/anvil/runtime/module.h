// Module: a named table of PackedFuncs, built in memory or loaded from a compiled kernel library.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/runtime/c_abi.h"
#include "anvil/runtime/packed_func.h"
#include "anvil/support/ref.h"

namespace anvil {

// A refcounted handle to a function table; copies share the table. A module loaded from a
// shared object keeps the library mapped while the module or any function taken from it lives.
// Lookups and additions are thread-safe.
class Module {
 public:
  // A null handle; defined() is false.
  Module();
  Module(const Module&);
  Module(Module&&) noexcept;
  Module& operator=(const Module&);
  Module& operator=(Module&&) noexcept;
  ~Module();

  // An empty module to fill with add_function.
  static Module create(std::string name);

  // Loads a kernel library (a .so exporting the table described in c_abi.h) and wraps each
  // kernel as a PackedFunc: Tensor arguments are passed as DLTensor*, and a kernel's failure
  // becomes an Error carrying its AnvilSetLastError message. Throws Error naming the path if
  // the file is missing, cannot be loaded, is not an anvil kernel library, or was built for
  // another ABI version. The module's name is the path as given.
  static Module load_shared(const std::string& path);

  bool defined() const { return bool(node_); }
  const std::string& name() const;

  // The function called name, if the module has one.
  std::optional<PackedFunc> get_function(std::string_view name) const;
  // The function called name; throws Error "module 'm' has no function named 'f'".
  PackedFunc function(std::string_view name) const;
  // Names of all functions, sorted.
  std::vector<std::string> function_names() const;
  // Adds func under name (the stored function carries that name). A taken name throws Error
  // unless override_existing is set.
  void add_function(const std::string& name, PackedFunc func, bool override_existing = false);

  class Node;

 private:
  explicit Module(Ref<Node> node);
  Ref<Node> node_;
};

// Wraps a kernel with the c_abi.h signature as a PackedFunc, converting arguments as
// Module::load_shared does. owner is kept alive as long as the function (the library or JIT
// session holding the code); origin names it in failure messages ("kernel 'f' in 'origin'").
PackedFunc wrap_c_kernel(AnvilPackedCFunc fn, std::string name, std::shared_ptr<const void> owner,
                         std::string origin);

}  // namespace anvil
