// The virtual machine (TVM's Relax/Relay VM): runs what the graph executor cannot, modules with
// control flow (If), ops whose output shape depends on input values (nonzero, unique, ...) and
// dynamic dims. It interprets a register-based instruction list (vm::Executable) whose
// instructions allocate tensors, call compiled kernels of a Module or packed functions, branch
// and return. The instruction set and its text form are documented in docs/vm.md.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/runtime/graph_executor.h"
#include "anvil/runtime/module.h"
#include "anvil/runtime/tensor.h"

namespace anvil {

namespace vm {
// A compiled program: functions of instructions, a constant pool, the kernel library and the
// packed functions it calls. Defined in anvil/runtime/vm_executable.h.
struct Executable;
}  // namespace vm

// The activation storage of a VirtualMachine: the arena its allocations share, against what
// the last run's allocations asked for in all.
struct VmMemoryUse {
  int64_t arena_bytes = 0;
  int64_t arena_buffers = 0;
  int64_t allocated_bytes = 0;
};

class VirtualMachine {
 public:
  explicit VirtualMachine(std::shared_ptr<const vm::Executable> executable,
                          Device device = Device::cpu());
  ~VirtualMachine();
  VirtualMachine(VirtualMachine&&) noexcept;
  VirtualMachine& operator=(VirtualMachine&&) noexcept;

  // Copies value into the named input of @main; throws Error naming the input when the name is
  // unknown or the dtype, rank or a static dim differ.
  void set_input(std::string_view name, const Tensor& value);
  void set_input(int index, const Tensor& value);
  int get_input_index(std::string_view name) const;  // -1 if absent
  int get_num_inputs() const;
  // The inputs of @main, in order; a dynamic dim is -1.
  std::vector<InputInfo> get_input_info() const;
  // Runs @main on the inputs set; throws Error naming the input that was not set.
  void run();
  // The outputs of the last run (a tuple result flattened), in order. The next run reuses an
  // output's storage only when no handle to it is held any more. An index out of range throws
  // Error.
  int get_num_outputs() const;
  Tensor get_output(int index) const;
  // Runs `number` times per repeat, `repeat` times, after one warm-up run.
  BenchmarkResult benchmark(int repeat = 10, int number = 1);
  // After a warm-up run, `repeat` runs with every kernel call timed: one row per invoke
  // instruction (node_name "N: kernel" for instruction N, the kernel or runtime function as
  // func_name),
  // slowest first. Shape functions are rows too. When run_mean_ms is given, as many whole runs
  // are timed untimed-inside, in turns with the profiled ones, and their mean stored there.
  std::vector<KernelProfile> profile(int repeat = 10, double* run_mean_ms = nullptr);
  VmMemoryUse memory_use() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace anvil
