// anvil._core: the compiler and runtime as one extension module. The Python package (anvil)
// gives it TVM's names; nothing Python runs inside the compile path.
#include <dlfcn.h>

#include "anvil/runtime/c_abi.h"
#include "anvil/support/error.h"
#include "bindings.h"

namespace {

// Exported kernel libraries (the .so of a package) leave the runtime's C ABI undefined and find
// it in the process's global scope. Python loads extensions with RTLD_LOCAL, which keeps the
// runtime library this extension links out of that scope: it is promoted once, here.
void make_runtime_symbols_global() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&AnvilSetLastError), &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
}

}  // namespace

NB_MODULE(_core, m) {
  namespace nb = nanobind;
  m.doc() = "anvil's compiler and runtime (use the anvil package, not this module)";
  // Every anvil::Error becomes anvil.AnvilError, a ValueError carrying the one-line message.
  nb::exception<anvil::Error>(m, "AnvilError", PyExc_ValueError);
  make_runtime_symbols_global();
  anvil::python::bind_runtime(m);
  anvil::python::bind_executors(m);
  anvil::python::bind_compiler(m);
  anvil::python::bind_tools(m);
}
