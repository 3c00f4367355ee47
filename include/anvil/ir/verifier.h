// Well-formedness of a graph IR module.
#pragma once

#include <string>
#include <vector>

#include "anvil/ir/ir.h"

namespace anvil::ir {

struct VerifyOptions {
  // Every expression must carry checked_type (run after InferType).
  bool require_types = false;
};

// Lists what is wrong: a var bound twice or used out of scope, a dataflow var
// used outside its block, a call of an unknown GlobalVar, a missing type.
std::vector<std::string> verify(const IRModule& mod, const VerifyOptions& options = {});

// Throws InternalError listing the problems verify finds (for pass pipelines).
void check_well_formed(const IRModule& mod, const VerifyOptions& options = {});

}  // namespace anvil::ir
