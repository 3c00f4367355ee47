// Reads the TVMScript-like text written by printer.h. Errors are anvil::Error
// "<source_name>:<line>:<col>: <what>" and never crash on any input.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "anvil/tir/tir.h"

namespace anvil::tir {

// One "@T.prim_func def ..." function. The function's global_symbol is its def name.
PrimFunc parse_prim_func(std::string_view text, const std::string& source_name = "<string>");

// Every "@T.prim_func" function in text, in order (a file of several kernels).
std::vector<PrimFunc> parse_prim_funcs(std::string_view text,
                                       const std::string& source_name = "<string>");

// Installs the graph IR's PrimFunc hooks (print, parse, structural equality, hash), so
// modules mixing graph functions and PrimFuncs print and parse. Idempotent.
void install_graph_ir_hooks();

}  // namespace anvil::tir
