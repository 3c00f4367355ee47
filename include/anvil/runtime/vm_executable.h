// The virtual machine's program (vm::Executable): register-based instructions per function, a
// constant pool, the compiled kernel library and the runtime functions the instructions call.
// build_vm() (anvil/driver/vm_build.h) makes one; VirtualMachine (vm.h) runs it. The
// instruction set and its text form are documented in docs/vm.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
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
  InvokeKernel,  // kernels[index](args..., dsts..., sizes...): destination passing
  InvokePacked,  // runtime_funcs[index](args..., &outputs): dsts = outputs
  If,            // jump to true_target if args[0] holds a non-zero first element, else false_target
  Goto,          // jump to true_target (the only jump that may go back: a loop)
  Move,          // dsts[i] = args[i] (the same tensor, not a copy)
  Ret,           // the function's results are args
  // Size variables bound during the run (Relax's match_cast): position i of args[0] is matched
  // against shape[i]; a program that is one size variable not yet bound binds it (and binds
  // it anew each time the same instruction runs again, as in a loop), any other is evaluated
  // and must equal the position. MatchShape reads the positions from the tensor's
  // dims, LoadShape from the elements of an int64 vector (what a shape function computed).
  MatchShape,
  LoadShape,
};

// The word the bytecode text uses for an opcode ("load_const", "invoke_kernel", ...).
const char* opcode_name(Opcode op);

// A dim known only at run time, such as `batch` or `seq * 12`: a postfix program over the
// function's size variables (Function::size_vars), which the VM binds from the inputs' shapes.
// A static dim is one Const step.
struct DimProgram {
  // Broadcast: numpy's broadcast of two dims, -1 where they do not broadcast.
  enum class Op : uint8_t { Const, Var, Add, Sub, Mul, FloorDiv, FloorMod, Min, Max, Broadcast };
  struct Step {
    Op op = Op::Const;
    int64_t value = 0;  // Const: the value; Var: the index of the size variable
  };
  std::vector<Step> steps;

  DimProgram() = default;
  DimProgram(int64_t value) : steps{{Op::Const, value}} {}  // NOLINT: static dims are common
  // True when the program is one Const step.
  bool is_static() const { return steps.size() == 1 && steps[0].op == Op::Const; }
  // The dim for the given size variables; throws Error on a division by zero or a stack the
  // program does not balance (a corrupt executable).
  int64_t evaluate(const std::vector<int64_t>& size_vars) const;
  // Text form over the variables' names: "batch", "seq * 12", "floordiv(n, 2)".
  std::string to_string(const std::vector<std::string>& size_var_names) const;
  friend bool operator==(const DimProgram& a, const DimProgram& b);
};

// One instruction; the fields an opcode does not use stay empty.
struct Instruction {
  Opcode op = Opcode::Ret;
  std::vector<RegIndex> args;  // registers read
  std::vector<RegIndex> dsts;  // registers written
  int32_t index = -1;          // constant, kernel or runtime function index
  int32_t true_target = -1;    // If / Goto
  int32_t false_target = -1;   // If
  // AllocTensor: the dims. InvokeKernel: int64 arguments passed after the outputs (the size
  // variables a kernel cannot read from its tensors, such as batch behind batch * 6).
  // MatchShape / LoadShape: what each position binds or must equal.
  std::vector<DimProgram> shape;
  DataType dtype;  // AllocTensor
};

// One function: its parameters (registers 0..n-1), register count and instructions.
struct Function {
  std::string name;
  std::vector<InputInfo> params;  // a dynamic dim is -1
  // The size variables (batch, seq) of the function's symbolic dims, and each parameter's dims
  // over them (parallel to params). A dim that is a bare variable binds it from the first input
  // that has it; every other use is checked against that binding when the run starts. The
  // variables no input binds are bound by MatchShape / LoadShape during the run (the dims of
  // a data-dependent result, the sizes a shape function computes).
  std::vector<std::string> size_vars;
  std::vector<std::vector<DimProgram>> param_dims;
  int32_t num_registers = 0;
  std::vector<Instruction> instructions;
};

// A runtime function: called with the input tensors followed by a handle to a
// std::vector<Tensor> it fills with its outputs (one per destination register, in order).
struct RuntimeFunc {
  std::string name;
  PackedFunc func;
  std::string note;  // why the group is not a compiled kernel (printed with the bytecode)
  // A function of call_dps_packed: it writes its outputs into its last arguments, tensors the
  // VM allocated, and returns nothing (no results handle is passed). It is found by name in
  // the global registry at each call, so that a function registered after the build, or
  // registered again, is the one called.
  bool destination_passing = false;
};

// The RuntimeFunc of call_dps_packed("name", ...): destination passing, looked up by name.
RuntimeFunc destination_passing_func(const std::string& name);

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

// First eight bytes of a serialized executable ("ANVILVM" and a NUL).
inline constexpr char kExecutableMagic[8] = {'A', 'N', 'V', 'I', 'L', 'V', 'M', '\0'};
// The format version save_executable writes; load_executable reads only this one.
inline constexpr uint32_t kExecutableVersion = 4;

// The executable as bytes (docs/artifact-format.md, "VM executable"): functions, instructions,
// constants, kernel names and the names of the runtime functions, which must be registered
// global functions (packed_func.h) so that a loader can find them by name. The kernel library
// travels beside it (mod.so). Throws Error naming a runtime function that is not registered
// under its name (a closure made at compile time cannot be saved).
std::string save_executable(const Executable& exec);
// Parses bytes written by save_executable; `lib` becomes the kernel library and must hold every
// kernel the executable names. Throws Error naming `what` and the problem for truncated or
// corrupt bytes, a wrong magic or version, an out-of-range register, jump, constant, kernel or
// size-variable index, or an unregistered runtime function; never reads out of bounds.
Executable load_executable(std::string_view bytes, Module lib, const std::string& what);

}  // namespace anvil::vm
