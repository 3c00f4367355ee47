// The C back end (--target c): lowered PrimFuncs -> one C99 source file that
// any C compiler builds into a kernel library (c_abi.h's table included).
#pragma once

#include <string>
#include <vector>

#include "anvil/tir/tir.h"

namespace anvil::codegen {

// The C99 source of a kernel library holding funcs (lowered form). Functions with the packed
// calling convention (attr "calling_conv" = "packed") are exported under their global symbol and
// listed in the library table of c_abi.h; others become plain C functions for extern calls. The
// file declares what it uses of the runtime ABI itself and includes only <dlpack/dlpack.h>,
// <math.h>, <stdbool.h>, <stddef.h>, <stdint.h> and <string.h>. Throws Error on input outside
// the lowered form (blocks, multi-dimensional accesses) or without a global symbol.
std::string emit_c(const std::vector<tir::PrimFunc>& funcs);

// emit_c, then `<compiler> -shared -fPIC -O2 -std=c99 -o path <source> -lm` (compiler may
// carry extra words, e.g. "clang -march=native"). Throws Error naming the compiler, with the
// first lines of its output, on failure.
void write_c_library(const std::vector<tir::PrimFunc>& funcs, const std::string& path,
                     const std::string& compiler = "cc");

}  // namespace anvil::codegen
