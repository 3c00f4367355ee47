// The VM's activation storage: registers die where their last reader has run, and the arena
// hands their buffers to later allocations, so a chain of layers over symbolic sizes holds about
// its largest live set, not the sum of its activations. The reference interpreter checks every
// output; the liveness analysis is also checked on hand-written bytecode.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "anvil/driver/vm_build.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/parser.h"
#include "anvil/reference/reference.h"
#include "anvil/runtime/vm_executable.h"
#include "runtime/vm_liveness.h"
#include "support/test_tensors.h"

namespace anvil {
namespace {

using testing::expect_close;
using testing::pseudo_random;

// Eight dense layers over a symbolic batch: each is its own kernel, and each activation is read
// only by the next layer.
std::string dense_chain_text() {
  std::string text = "def @main(%x: Tensor[(n, 48), float32], %w: Tensor[(48, 48), float32]) {\n";
  std::string value = "%x";
  for (int layer = 0; layer < 8; ++layer) {
    text += "  %" + std::to_string(layer) + " = nn.relu(nn.dense(" + value + ", %w));\n";
    value = "%" + std::to_string(layer);
  }
  return text + "  " + value + "\n}\n";
}

// Weights scaled so that the activations stay near 1 through eight layers: the comparison then
// tests the storage, not the rounding of growing sums.
Tensor chain_weight() {
  Tensor w = pseudo_random({48, 48}, DataType::float32(), 7);
  for (int64_t i = 0; i < w.numel(); ++i) w.data_as<float>()[i] *= 0.2f;
  return w;
}

struct Chain {
  ir::IRModule mod = ir::infer_type(ir::parse_module(dense_chain_text()));
  Tensor weight = chain_weight();

  Tensor expected(const Tensor& x) const { return reference::Interpreter(mod).run({x, weight})[0]; }
};

TEST(VmMemory, DenseChainSharesBuffersAtEverySize) {
  Chain chain;
  driver::VmModule built = driver::build_vm(chain.mod, {});
  VirtualMachine vm = built.create_vm();
  vm.set_input("w", chain.weight);
  // Growing, repeated and shrinking batches: a buffer grown for a larger run serves a smaller.
  VmMemoryUse after_first_nine;
  const std::vector<int64_t> batches = {5, 9, 9, 3, 9};
  for (size_t i = 0; i < batches.size(); ++i) {
    const int64_t n = batches[i];
    Tensor x = pseudo_random({n, 48}, DataType::float32(), 100 + uint64_t(i));
    vm.set_input("x", x);
    vm.run();
    expect_close(chain.expected(x), vm.get_output(0), "dense chain at batch " + std::to_string(n));
    const VmMemoryUse use = vm.memory_use();
    const int64_t activation = n * 48 * 4;
    // Eight activations of n x 48 asked for; a layer's input and output are live at once, and
    // the output the caller holds keeps a third buffer.
    EXPECT_GE(use.allocated_bytes, 8 * activation) << "batch " << n;
    EXPECT_LE(use.arena_buffers, 3) << "batch " << n;
    if (n == 9 && i == 1) after_first_nine = use;
    if (n == 9 && i > 1) {
      // The same size again allocates nothing new.
      EXPECT_EQ(use.arena_bytes, after_first_nine.arena_bytes) << "run " << i;
      EXPECT_EQ(use.arena_buffers, after_first_nine.arena_buffers) << "run " << i;
    }
  }
}

TEST(VmMemory, HeldOutputSurvivesTheNextRun) {
  Chain chain;
  driver::VmModule built = driver::build_vm(chain.mod, {});
  VirtualMachine vm = built.create_vm();
  vm.set_input("w", chain.weight);
  Tensor first_input = pseudo_random({4, 48}, DataType::float32(), 1);
  Tensor second_input = pseudo_random({4, 48}, DataType::float32(), 2);
  vm.set_input("x", first_input);
  vm.run();
  Tensor first = vm.get_output(0);
  vm.set_input("x", second_input);
  vm.run();
  expect_close(chain.expected(first_input), first, "the first run's output, held");
  expect_close(chain.expected(second_input), vm.get_output(0), "the second run's output");
  EXPECT_FALSE(first.same_as(vm.get_output(0)));
}

vm::Instruction op(vm::Opcode code, std::vector<vm::RegIndex> args, std::vector<vm::RegIndex> dsts,
                   int32_t target = -1, int32_t other = -1) {
  vm::Instruction in;
  in.op = code;
  in.args = std::move(args);
  in.dsts = std::move(dsts);
  in.index = 0;
  in.true_target = target;
  in.false_target = other;
  return in;
}

std::vector<vm::RegIndex> sorted(std::vector<vm::RegIndex> regs) {
  std::sort(regs.begin(), regs.end());
  return regs;
}

// r0 = x, r1 = condition. r2 is written by a kernel and read only on the true branch; r3 is read
// after the join; r4 is allocated and never read by anyone but its writer.
TEST(VmMemory, RegistersDieAfterTheirLastReaderOnEachPath) {
  vm::Function fn;
  fn.name = "main";
  fn.params = {{"x", {4}, DataType::float32()}, {"c", {}, DataType::boolean()}};
  fn.num_registers = 6;
  fn.instructions = {
      op(vm::Opcode::AllocTensor, {}, {2}),    // 0
      op(vm::Opcode::InvokeKernel, {0}, {2}),  // 1: r2 = k(r0)
      op(vm::Opcode::AllocTensor, {}, {3}),    // 2
      op(vm::Opcode::InvokeKernel, {0}, {3}),  // 3: r3 = k(r0); r0's last reader
      op(vm::Opcode::If, {1}, {}, 5, 7),       // 4
      op(vm::Opcode::InvokeKernel, {2}, {3}),  // 5: true: r3 = k(r2)
      op(vm::Opcode::Goto, {}, {}, 8),         // 6
      op(vm::Opcode::AllocTensor, {}, {4}),    // 7: false: r4, never read
      op(vm::Opcode::Move, {3}, {5}),          // 8: join
      op(vm::Opcode::Ret, {5}, {}),            // 9
  };
  vm::RegisterDeaths deaths = vm::register_deaths(fn);
  EXPECT_TRUE(deaths.after[1].empty());
  EXPECT_EQ(sorted(deaths.after[3]), (std::vector<vm::RegIndex>{0}));
  // The condition dies on both edges; r2 lives into the true branch only.
  EXPECT_EQ(sorted(deaths.on_true[4]), (std::vector<vm::RegIndex>{1}));
  EXPECT_EQ(sorted(deaths.on_false[4]), (std::vector<vm::RegIndex>{1, 2}));
  EXPECT_EQ(sorted(deaths.after[5]), (std::vector<vm::RegIndex>{2}));
  EXPECT_EQ(sorted(deaths.after[7]), (std::vector<vm::RegIndex>{4}));
  EXPECT_EQ(sorted(deaths.after[8]), (std::vector<vm::RegIndex>{3}));
  EXPECT_TRUE(deaths.after[9].empty());
}

}  // namespace
}  // namespace anvil
