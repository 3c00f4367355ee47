#include "driver/compile_kernels.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "anvil/codegen/c.h"
#include "anvil/codegen/llvm.h"

namespace anvil::driver {

BuildTarget resolve_build_target(const std::string& text) {
  BuildTarget resolved;
  resolved.target = text == "llvm" ? codegen::Target::host() : codegen::Target::parse(text);
  if (resolved.target.kind == "c" && resolved.target.mcpu.empty())
    resolved.target.mcpu = codegen::Target::host().mcpu;
  resolved.vector_bits = resolved.target.kind == "c" ? codegen::Target::host().vector_bits()
                                                     : resolved.target.vector_bits();
  return resolved;
}

Module compile_kernels(const std::vector<tir::PrimFunc>& kernels, const codegen::Target& target) {
  if (kernels.empty()) return Module::create("empty");
  if (target.kind != "c") return codegen::jit_compile(kernels, target);
  static std::atomic<int> counter{0};
  std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("anvil-c-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".so");
  codegen::write_c_library(kernels, path.string());
  Module lib = Module::load_shared(path.string());
  std::filesystem::remove(path);  // the mapping stays valid
  return lib;
}

}  // namespace anvil::driver
