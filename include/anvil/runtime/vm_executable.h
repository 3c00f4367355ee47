// The virtual machine's program (vm::Executable): register-based instructions per function, a
// constant pool, the compiled kernel library and the runtime functions the instructions call.
// build_vm() (anvil/driver/vm_build.h) makes one; VirtualMachine (vm.h) runs it. The
// instruction set and its text form are documented in docs/vm.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "anvil/runtime/data_type.h"
#include "anvil/runtime/graph_executor.h"
#include "anvil/runtime/module.h"
#include "anvil/runtime/packed_func.h"
#include "anvil/runtime/tensor.h"

namespace anvil::vm {

// A register number; registers hold tensors. Parameters occupy registers 0..n-1.
using RegIndex = int32_t;

// What an instruction does (docs/vm.md lists the semantics of each).
enum class Opcode : uint8_t {
  LoadConst,     // dsts[0] = constants[index]
  AllocTensor,   // dsts[0] = storage of `shape` x `dtype`, reused by later runs
  InvokeKernel,  // kernels[index](args..., dsts...): destination passing
  InvokePacked,  // runtime_funcs[index](args..., &outputs): dsts = outputs
  If,            // jump to true_target if args[0] holds a non-zero first element, else false_target
  Goto,          // jump to true_target
  Move,          // dsts[i] = args[i] (the same tensor, not a copy)
  Ret,           // the function's results are args
};

// The word the bytecode text uses for an opcode ("load_const", "invoke_kernel", ...).
const char* opcode_name(Opcode op);

// One instruction; the fields an opcode does not use stay empty.
struct Instruction {
  Opcode op = Opcode::Ret;
  std::vector<RegIndex> args;  // registers read
  std::vector<RegIndex> dsts;  // registers written
  int32_t index = -1;          // constant, kernel or runtime function index
  int32_t true_target = -1;    // If / Goto
  int32_t false_target = -1;   // If
  std::vector<int64_t> shape;  // AllocTensor
  DataType dtype;              // AllocTensor
};

// One function: its parameters (registers 0..n-1), register count and instructions.
struct Function {
  std::string name;
  std::vector<InputInfo> params;  // a dynamic dim is -1
  int32_t num_registers = 0;
  std::vector<Instruction> instructions;
};

// A runtime function: called with the input tensors followed by a handle to a
// std::vector<Tensor> it fills with its outputs (one per destination register, in order).
struct RuntimeFunc {
  std::string name;
  PackedFunc func;
};

// A whole program. functions[0] is @main.
struct Executable {
  std::vector<Function> functions;
  std::vector<Tensor> constants;
  Module lib;                             // the compiled kernels
  std::vector<std::string> kernel_names;  // InvokeKernel index -> function of lib
  std::vector<RuntimeFunc> runtime_funcs;
};

// The instructions of every function as text (docs/vm.md).
std::string print_bytecode(const Executable& exec);

}  // namespace anvil::vm
