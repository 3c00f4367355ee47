// The reference interpreter as the oracle of a VM run: the same inputs through both, every
// output compared.
#pragma once

#include <string>
#include <vector>

#include "anvil/ir/ir.h"
#include "anvil/reference/reference.h"
#include "anvil/runtime/vm.h"
#include "support/test_tensors.h"

namespace anvil::testing {

inline void expect_matches_reference(VirtualMachine& vm, const ir::IRModule& mod,
                                     const std::vector<Tensor>& inputs, const std::string& what) {
  for (size_t i = 0; i < inputs.size(); ++i) vm.set_input(int(i), inputs[i]);
  vm.run();
  std::vector<Tensor> expected = reference::Interpreter(mod).run(inputs);
  ASSERT_EQ(vm.get_num_outputs(), int(expected.size())) << what;
  for (size_t i = 0; i < expected.size(); ++i)
    expect_close(expected[i], vm.get_output(int(i)), what + ", output " + std::to_string(i));
}

}  // namespace anvil::testing
