// Parses the text that print_module writes back into a module.
#pragma once

#include <string>
#include <string_view>

#include "anvil/ir/ir.h"

namespace anvil::ir {

// Parses a module. Malformed text throws Error "<source>:<line>:<col>: expected ..., got ...".
IRModule parse_module(std::string_view text, const std::string& source_name = "<text>");

// Parses one expression (free variables must carry annotations: %x: Tensor[...]).
Expr parse_expr(std::string_view text, const std::string& source_name = "<text>");

// Parses a type such as "Tensor[(n, 4), float32]".
Type parse_type(std::string_view text, const std::string& source_name = "<text>");

}  // namespace anvil::ir
