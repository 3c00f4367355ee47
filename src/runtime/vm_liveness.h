// Where each register of a VM function dies: the points after which no path reads the tensor
// it holds. The interpreter drops its handle there, so that the storage of an activation is
// free for a later allocation as soon as its last reader has run (vm.cpp).
#pragma once

#include <vector>

#include "anvil/runtime/vm_executable.h"

namespace anvil::vm {

struct RegisterDeaths {
  // Per instruction: the registers dead once it has run and control falls through to the next.
  std::vector<std::vector<RegIndex>> after;
  // If and Goto: the registers dead on the jump to true_target; If: to false_target.
  std::vector<std::vector<RegIndex>> on_true;
  std::vector<std::vector<RegIndex>> on_false;
};

// Backward liveness over the function's control flow. Reads: an instruction's args, and the
// destinations of InvokeKernel (the storage it writes into). Writes: the destinations of every
// other instruction. Registers of the function's parameters are live from entry. A register
// that is written and never read dies right after the write. Ret kills nothing (the
// interpreter clears the whole register file there).
RegisterDeaths register_deaths(const Function& fn);

}  // namespace anvil::vm
