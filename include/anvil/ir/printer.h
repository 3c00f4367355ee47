// The graph IR's text form, in the style of TVM's Relay text format.
#pragma once

#include <string>
#include <string_view>

#include "anvil/ir/ir.h"

namespace anvil::ir {

struct PrintOptions {
  // Print "/* ty=... */" after each typed expression.
  bool show_types = true;
  // Append constants too large to print inline as a metadata section, so the
  // text parses back on its own; otherwise they print as meta[Constant][i].
  bool include_metadata = true;
};

// The whole module: "#[version = \"0.0.5\"]" then each function as "def @name(...) { ... }".
std::string print_module(const IRModule& mod, const PrintOptions& options = {});

// One expression.
std::string print_expr(const Expr& expr, const PrintOptions& options = {});

// text as a string literal of the IR text formats (graph and tensor IR spell strings alike):
// double-quoted, with \" \\ \n \t \r and \xHH escapes.
std::string quote_string(std::string_view text);

}  // namespace anvil::ir
