// The C back end (--target c): lowered PrimFuncs -> one C99 source file that
// any C compiler builds into a kernel library (c_abi.h's table included).
#pragma once

#include <string>
#include <vector>

#include "anvil/tir/tir.h"

namespace anvil::codegen {

// The C source of a kernel library holding funcs (lowered, packed calling convention). The
// file is self-contained apart from <dlpack/dlpack.h>, <math.h>, <stdint.h> and <stddef.h>.
std::string emit_c(const std::vector<tir::PrimFunc>& funcs);

// emit_c, then compiles it with `compiler` ("cc" by default) into the shared library path.
// Throws Error with the compiler's message on failure.
void write_c_library(const std::vector<tir::PrimFunc>& funcs, const std::string& path,
                     const std::string& compiler = "cc");

}  // namespace anvil::codegen
