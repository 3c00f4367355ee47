// The virtual machine's interpreter: a loop over the instructions of @main with a register file
// of tensors. Activations live in an arena of buffers that the VM keeps across runs: each
// register's handle is dropped where the register dies (vm_liveness.h), which frees its buffer
// for the next allocation that fits, so the activations of a run share a working set near its
// largest live set (the graph executor's plan does the same at compile time), and a second run
// with the same shapes allocates nothing.
#include "anvil/runtime/vm.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "anvil/runtime/vm_executable.h"
#include "anvil/support/error.h"
#include "runtime/binary_io.h"
#include "runtime/vm_liveness.h"

namespace anvil {

namespace {

// "(2, ?) float32": a dynamic dim (-1) prints as ?.
std::string describe(const std::vector<int64_t>& shape, DataType dtype) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
  return text + ") " + dtype.to_string();
}

double elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// True when a condition tensor holds a non-zero first element (an empty tensor is false).
bool is_true(const Tensor& cond) { return cond.numel() > 0 && cond.get_as_double(0) != 0; }

}  // namespace

class VirtualMachine::Impl {
 public:
  Impl(std::shared_ptr<const vm::Executable> exec, Device device)
      : exec_(std::move(exec)), device_(device) {
    ANVIL_ICHECK(exec_ && !exec_->functions.empty(), "vm: an executable without @main");
    const vm::Function& main = exec_->functions[0];
    inputs_.resize(main.params.size());
    registers_.resize(size_t(main.num_registers));
    deaths_ = vm::register_deaths(main);
    for (const std::string& name : exec_->kernel_names)
      kernels_.push_back(exec_->lib.function(name));
    size_values_.resize(main.size_vars.size());
    size_source_.resize(main.size_vars.size());
    size_dim_.resize(main.size_vars.size());
  }

  const vm::Function& main() const { return exec_->functions[0]; }

  int input_index(std::string_view name) const {
    const std::vector<InputInfo>& params = main().params;
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].name == name) return int(i);
    return -1;
  }

  void set_input(int index, const Tensor& value) {
    const std::vector<InputInfo>& params = main().params;
    if (index < 0 || index >= int(params.size()))
      throw_error("set_input: input index ", index, " out of range (the module has ", params.size(),
                  " inputs)");
    const InputInfo& info = params[size_t(index)];
    if (!value.defined()) throw_error("set_input: input '", info.name, "' given an empty tensor");
    std::vector<int64_t> shape = value.shape_vector();
    bool fits = value.dtype() == info.dtype && shape.size() == info.shape.size();
    for (size_t d = 0; fits && d < shape.size(); ++d)
      if (info.shape[d] >= 0 && info.shape[d] != shape[d])
        throw_error("set_input: input '", info.name, "' has ", shape[d], " in dim ", d,
                    ", but the model fixes that dim at ", info.shape[d], " (expects ",
                    describe(info.shape, info.dtype), ")");
    if (!fits)
      throw_error("set_input: input '", info.name, "' expects ", describe(info.shape, info.dtype),
                  ", got ", describe(shape, value.dtype()));
    Tensor& slot = inputs_[size_t(index)];
    if (!slot.defined() || slot.shape_vector() != shape)
      slot = Tensor::empty(shape, value.dtype(), device_);
    slot.copy_from(value);
  }

  std::vector<KernelProfile> profile(int repeat, double* run_mean_ms) {
    if (repeat < 1) throw_error("profile: repeat must be at least 1, got ", repeat);
    run();
    const vm::Function& fn = main();
    call_ms_.assign(fn.instructions.size(), 0.0);
    double run_total_ms = 0;
    for (int r = 0; r < repeat; ++r) {
      if (run_mean_ms) {
        auto start = std::chrono::steady_clock::now();
        run();
        run_total_ms += elapsed_ms(start);
      }
      profiling_ = true;
      try {
        run();
      } catch (...) {
        profiling_ = false;
        throw;
      }
      profiling_ = false;
    }
    if (run_mean_ms) *run_mean_ms = run_total_ms / repeat;
    std::vector<KernelProfile> rows;
    for (size_t pc = 0; pc < fn.instructions.size(); ++pc) {
      const vm::Instruction& in = fn.instructions[pc];
      if (in.op != vm::Opcode::InvokeKernel && in.op != vm::Opcode::InvokePacked) continue;
      const std::string& name = in.op == vm::Opcode::InvokeKernel
                                    ? exec_->kernel_names[size_t(in.index)]
                                    : exec_->runtime_funcs[size_t(in.index)].name;
      rows.push_back(KernelProfile{std::to_string(pc) + ": " + name, name, call_ms_[pc] / repeat,
                                   0.0, "", 0, "", ""});
    }
    rank_kernel_profile(rows);
    return rows;
  }

  void run() {
    const vm::Function& fn = main();
    // A run that threw left its registers holding buffers; they must not look busy to this one.
    std::fill(registers_.begin(), registers_.end(), Tensor());
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (!inputs_[i].defined()) throw_error("run: input '", fn.params[i].name, "' was not set");
      registers_[i] = inputs_[i];
    }
    bind_size_vars();
    outputs_.clear();
    allocated_bytes_ = 0;
    size_t pc = 0;
    while (true) {
      ANVIL_ICHECK(pc < fn.instructions.size(), "vm: fell off the end of @", fn.name);
      const vm::Instruction& in = fn.instructions[pc];
      switch (in.op) {
        case vm::Opcode::LoadConst:
          registers_[size_t(in.dsts[0])] = exec_->constants[size_t(in.index)];
          break;
        case vm::Opcode::AllocTensor:
          registers_[size_t(in.dsts[0])] = allocate(pc, in);
          break;
        case vm::Opcode::InvokeKernel:
        case vm::Opcode::InvokePacked: {
          const auto start = profiling_ ? std::chrono::steady_clock::now()
                                        : std::chrono::steady_clock::time_point();
          in.op == vm::Opcode::InvokeKernel ? invoke_kernel(pc, in) : invoke_packed(pc, in);
          if (profiling_) call_ms_[pc] += elapsed_ms(start);
          break;
        }
        case vm::Opcode::If: {
          const bool taken = is_true(registers_[size_t(in.args[0])]);
          drop(taken ? deaths_.on_true[pc] : deaths_.on_false[pc]);
          pc = size_t(taken ? in.true_target : in.false_target);
          continue;
        }
        case vm::Opcode::Goto:
          drop(deaths_.on_true[pc]);
          pc = size_t(in.true_target);
          continue;
        case vm::Opcode::Move: {
          // Read every source before writing, so that overlapping moves behave as one step.
          std::vector<Tensor> values;
          for (vm::RegIndex r : in.args) values.push_back(registers_[size_t(r)]);
          for (size_t i = 0; i < in.dsts.size(); ++i) registers_[size_t(in.dsts[i])] = values[i];
          break;
        }
        case vm::Opcode::Ret:
          for (vm::RegIndex r : in.args) outputs_.push_back(registers_[size_t(r)]);
          std::fill(registers_.begin(), registers_.end(), Tensor());
          return;
        case vm::Opcode::MatchShape:
        case vm::Opcode::LoadShape:
          match_shape(pc, in);
          break;
      }
      drop(deaths_.after[pc]);
      ++pc;
    }
  }

  int num_outputs() const { return int(outputs_.size()); }

  VmMemoryUse memory_use() const {
    VmMemoryUse use;
    for (const Tensor& buffer : arena_) use.arena_bytes += buffer.nbytes();
    use.arena_buffers = int64_t(arena_.size());
    use.allocated_bytes = allocated_bytes_;
    return use;
  }

  Tensor output(int index) const {
    if (index < 0 || index >= int(outputs_.size()))
      throw_error("get_output: output index ", index, " out of range (the last run produced ",
                  outputs_.size(), " outputs)");
    return outputs_[size_t(index)];
  }

 private:
  // Binds the size variables from the inputs' shapes: a dim that is a bare variable binds it
  // from the first input that has it; every other symbolic dim must then agree.
  void bind_size_vars() {
    const vm::Function& fn = main();
    if (fn.size_vars.empty()) return;
    std::fill(size_source_.begin(), size_source_.end(), kUnbound);
    // Variables bound by match_shape start each run at 0, so that a corrupt program reading one
    // early sees no value of an earlier run.
    std::fill(size_values_.begin(), size_values_.end(), 0);
    for (size_t i = 0; i < fn.param_dims.size(); ++i) {
      std::span<const int64_t> shape = inputs_[i].shape();
      for (size_t d = 0; d < fn.param_dims[i].size() && d < shape.size(); ++d) {
        const vm::DimProgram& dim = fn.param_dims[i][d];
        if (dim.steps.size() != 1 || dim.steps[0].op != vm::DimProgram::Op::Var) continue;
        size_t var = size_t(dim.steps[0].value);
        ANVIL_ICHECK(var < size_values_.size(), "vm: a size variable out of range");
        if (size_source_[var] == kUnbound) {
          size_values_[var] = shape[d];
          size_source_[var] = int(i);
          size_dim_[var] = d;
        } else if (size_values_[var] != shape[d]) {
          const std::string& first = fn.params[size_t(size_source_[var])].name;
          throw_error("run: input '", fn.params[i].name, "' has ", fn.size_vars[var], " = ",
                      shape[d], " in dim ", d, ", but input '", first, "' has ", fn.size_vars[var],
                      " = ", size_values_[var], " in dim ", size_dim_[var]);
        }
      }
    }
    for (size_t i = 0; i < fn.param_dims.size(); ++i) {
      std::span<const int64_t> shape = inputs_[i].shape();
      for (size_t d = 0; d < fn.param_dims[i].size() && d < shape.size(); ++d) {
        const vm::DimProgram& dim = fn.param_dims[i][d];
        if (dim.is_static()) continue;
        int64_t expected = dim.evaluate(size_values_);
        if (expected != shape[d])
          throw_error("run: input '", fn.params[i].name, "' has ", shape[d], " in dim ", d,
                      ", expected ", dim.to_string(fn.size_vars), " = ", expected);
      }
    }
  }

  // match_shape / load_shape: each position binds the size variable its program names when
  // that variable is not bound yet, or was bound by this same instruction (on an earlier pass
  // through a loop), and must equal its program's value otherwise.
  void match_shape(size_t pc, const vm::Instruction& in) {
    const Tensor& source = registers_[size_t(in.args[0])];
    bool values = in.op == vm::Opcode::LoadShape;
    if (values && (source.dtype() != DataType::int64() || source.ndim() != 1))
      throw_error("vm: instruction ", pc, " (load_shape) reads a ", source.dtype().to_string(),
                  " tensor of rank ", source.ndim(), ", expected an int64 vector");
    int64_t count = values ? source.numel() : int64_t(source.ndim());
    if (count != int64_t(in.shape.size()))
      throw_error("vm: instruction ", pc, " (", vm::opcode_name(in.op), ") expects ",
                  in.shape.size(), " values, the tensor gives ", count);
    const int64_t* data = values ? static_cast<const int64_t*>(source.data()) : nullptr;
    for (size_t i = 0; i < in.shape.size(); ++i) {
      int64_t actual = values ? data[i] : source.shape()[i];
      const vm::DimProgram& dim = in.shape[i];
      if (dim.steps.size() == 1 && dim.steps[0].op == vm::DimProgram::Op::Var) {
        size_t var = size_t(dim.steps[0].value);
        ANVIL_ICHECK(var < size_values_.size(), "vm: a size variable out of range");
        if (size_source_[var] == kUnbound ||
            (size_source_[var] == kBoundDuringRun && size_dim_[var] == pc)) {
          size_values_[var] = actual;
          size_source_[var] = kBoundDuringRun;
          size_dim_[var] = pc;
          continue;
        }
      }
      int64_t expected = dim.evaluate(size_values_);
      if (expected != actual)
        throw_error("vm: instruction ", pc, " (", vm::opcode_name(in.op), ") finds ", actual,
                    " at position ", i, ", expected ", dim.to_string(main().size_vars), " = ",
                    expected);
    }
  }

  void drop(const std::vector<vm::RegIndex>& dead) {
    for (vm::RegIndex r : dead) registers_[size_t(r)] = Tensor();
  }

  // The storage of an AllocTensor: a view of the smallest free arena buffer that holds it (a
  // buffer is free when the arena's handle is its only one: every register that held a view of
  // it has died, and no output of an earlier run the caller still holds points into it). With
  // none that fits, the largest free buffer is replaced by one of the size asked for, so the
  // arena holds at most as many buffers as a run has live at once, each grown to what it had to
  // hold.
  Tensor allocate(size_t pc, const vm::Instruction& in) {
    shape_scratch_.clear();
    for (const vm::DimProgram& dim : in.shape) {
      int64_t extent = dim.is_static() ? dim.steps[0].value : dim.evaluate(size_values_);
      if (extent < 0)
        throw_error("vm: instruction ", pc, " allocates a tensor with dim ",
                    dim.to_string(main().size_vars), " = ", extent);
      shape_scratch_.push_back(extent);
    }
    int64_t bytes = 0;
    if (!detail::checked_byte_size(shape_scratch_, in.dtype.bytes(), &bytes))
      throw_error("vm: instruction ", pc, " allocates a tensor of shape ",
                  shape_to_string(shape_scratch_), ", too large to allocate");
    allocated_bytes_ += bytes;
    Tensor* fit = nullptr;
    Tensor* largest = nullptr;
    for (Tensor& buffer : arena_) {
      if (buffer.use_count() != 1) continue;
      const int64_t held = buffer.nbytes();
      if (held >= bytes && (!fit || held < fit->nbytes())) fit = &buffer;
      if (!largest || held > largest->nbytes()) largest = &buffer;
    }
    if (!fit) {
      Tensor fresh = Tensor::empty({bytes}, DataType::uint8(), device_);
      if (largest) {
        *largest = std::move(fresh);
        fit = largest;
      } else {
        arena_.push_back(std::move(fresh));
        fit = &arena_.back();
      }
    }
    return fit->prefix_view(shape_scratch_, in.dtype);
  }

  void invoke_kernel(size_t pc, const vm::Instruction& in) {
    call_args_.clear();
    for (vm::RegIndex r : in.args) call_args_.emplace_back(registers_[size_t(r)]);
    for (vm::RegIndex r : in.dsts) call_args_.emplace_back(registers_[size_t(r)]);
    // Size variables the kernel cannot read from its tensors follow them as int64 scalars.
    for (const vm::DimProgram& size : in.shape)
      call_args_.emplace_back(int64_t(size.evaluate(size_values_)));
    try {
      kernels_[size_t(in.index)].call(call_args_);
      call_args_.clear();  // the handles would keep dead buffers from the arena
    } catch (const Error& e) {
      throw_error("vm: instruction ", pc, " (kernel '", exec_->kernel_names[size_t(in.index)],
                  "'): ", e.what());
    }
  }

  void invoke_packed(size_t pc, const vm::Instruction& in) {
    const vm::RuntimeFunc& func = exec_->runtime_funcs[size_t(in.index)];
    std::vector<Tensor> results;
    call_args_.clear();
    for (vm::RegIndex r : in.args) call_args_.emplace_back(registers_[size_t(r)]);
    if (!func.destination_passing) call_args_.emplace_back(static_cast<void*>(&results));
    try {
      func.func.call(call_args_);
      call_args_.clear();
    } catch (const Error& e) {
      throw_error("vm: instruction ", pc, " (runtime function '", func.name, "'): ", e.what());
    }
    ANVIL_ICHECK(results.size() == in.dsts.size(), "vm: runtime function '", func.name,
                 "' returned ", results.size(), " outputs, expected ", in.dsts.size());
    for (size_t i = 0; i < results.size(); ++i)
      registers_[size_t(in.dsts[i])] = std::move(results[i]);
  }

  std::shared_ptr<const vm::Executable> exec_;
  Device device_;
  std::vector<Tensor> inputs_;        // copies of the values set, one per parameter
  std::vector<Tensor> registers_;     // the register file of @main
  vm::RegisterDeaths deaths_;         // where each register's handle is dropped
  std::vector<Tensor> arena_;         // activation buffers (uint8), kept across runs
  int64_t allocated_bytes_ = 0;       // the bytes the last run's AllocTensors asked for
  std::vector<int64_t> size_values_;  // the size variables of this run
  // The input that bound each size variable, or one of these.
  static constexpr int kUnbound = -1, kBoundDuringRun = -2;  // the latter by match_shape
  std::vector<int> size_source_;
  std::vector<size_t> size_dim_;  // the dim each was bound from, or the instruction that bound it
  std::vector<int64_t> shape_scratch_;
  std::vector<PackedFunc> kernels_;
  std::vector<Tensor> outputs_;
  std::vector<Value> call_args_;  // reused argument array
  bool profiling_ = false;        // profile(): time each invoke into call_ms_
  std::vector<double> call_ms_;   // per instruction, summed over the profiled runs
};

VirtualMachine::VirtualMachine(std::shared_ptr<const vm::Executable> executable, Device device)
    : impl_(std::make_unique<Impl>(std::move(executable), device)) {}
VirtualMachine::~VirtualMachine() = default;
VirtualMachine::VirtualMachine(VirtualMachine&&) noexcept = default;
VirtualMachine& VirtualMachine::operator=(VirtualMachine&&) noexcept = default;

void VirtualMachine::set_input(std::string_view name, const Tensor& value) {
  int index = impl_->input_index(name);
  if (index < 0) throw_error("set_input: no input named '", name, "'");
  impl_->set_input(index, value);
}
void VirtualMachine::set_input(int index, const Tensor& value) { impl_->set_input(index, value); }
int VirtualMachine::get_input_index(std::string_view name) const {
  return impl_->input_index(name);
}
int VirtualMachine::get_num_inputs() const { return int(impl_->main().params.size()); }
std::vector<InputInfo> VirtualMachine::get_input_info() const { return impl_->main().params; }
void VirtualMachine::run() { impl_->run(); }
int VirtualMachine::get_num_outputs() const { return impl_->num_outputs(); }
Tensor VirtualMachine::get_output(int index) const { return impl_->output(index); }
VmMemoryUse VirtualMachine::memory_use() const { return impl_->memory_use(); }

BenchmarkResult VirtualMachine::benchmark(int repeat, int number) {
  return benchmark_function([this] { run(); }, repeat, number);
}

std::vector<KernelProfile> VirtualMachine::profile(int repeat, double* run_mean_ms) {
  return impl_->profile(repeat, run_mean_ms);
}

}  // namespace anvil
