// Text form of the tensor IR: a TVMScript-like language (docs/tir-text-format.md)
// that parser.h reads back to a structurally equal function.
#pragma once

#include <string>

#include "anvil/tir/tir.h"

namespace anvil::tir {

// The whole function as "@T.prim_func\ndef name(...):\n    ..." ; name defaults to the
// function's global_symbol (or "main").
std::string print(const PrimFunc& func, const std::string& name = "");
// A statement, indented by `indent` levels of four spaces.
std::string print(const Stmt& stmt, int indent = 0);
// An expression on one line ("x[i, j] * T.float32(2)").
std::string print(const PrimExpr& expr);

}  // namespace anvil::tir
