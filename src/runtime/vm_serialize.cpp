// The VM executable as bytes (mod.vm of a VM package; docs/artifact-format.md, "VM packages").
// Loading is a parser of untrusted bytes: every count is bounded by the bytes that remain before
// anything is allocated, and the whole program is checked (indices, jumps, dims, which registers
// hold a value where they are read) so that a damaged file is an Error here and can never make
// the VM read out of bounds later.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/runtime/params.h"
#include "anvil/runtime/vm_executable.h"
#include "anvil/support/error.h"
#include "runtime/binary_io.h"

namespace anvil::vm {
namespace {

using detail::append_le;
using DimOp = DimProgram::Op;

// DimProgram::evaluate's fixed stack.
constexpr int kMaxDimDepth = 16;
constexpr uint8_t kLastOpcode = uint8_t(Opcode::LoadShape);
constexpr uint8_t kLastDimOp = uint8_t(DimOp::Broadcast);

// The smallest encoding of each repeated item, so that a count can be checked against the bytes
// that remain before a vector of that many is reserved.
constexpr uint64_t kStringMinBytes = 4;                        // length
constexpr uint64_t kParamMinBytes = 4 + 4 + 4;                 // name, dtype, rank
constexpr uint64_t kDimMinBytes = 4;                           // step count
constexpr uint64_t kStepBytes = 1 + 8;                         // op, value
constexpr uint64_t kInstructionMinBytes = 1 + 4 + 4;           // opcode, arg and dst counts
constexpr uint64_t kFunctionMinBytes = 4 + 4 + 4 + 4 + 4 + 4;  // name .. instruction count

// ---- Writing ----

void put_count(std::string& out, size_t n) {
  if (n > std::numeric_limits<uint32_t>::max())
    throw_error("cannot save the VM executable: a list of ", n, " items is too long");
  append_le(out, uint32_t(n));
}

void put_string(std::string& out, std::string_view text) {
  put_count(out, text.size());
  out += text;
}

void put_dtype(std::string& out, DataType dtype) {
  DLDataType dl = dtype.to_dlpack();
  append_le(out, dl.code);
  append_le(out, dl.bits);
  append_le(out, dl.lanes);
}

void put_dim(std::string& out, const DimProgram& dim) {
  put_count(out, dim.steps.size());
  for (const DimProgram::Step& step : dim.steps) {
    append_le(out, uint8_t(step.op));
    append_le(out, step.value);
  }
}

void put_dims(std::string& out, const std::vector<DimProgram>& dims) {
  put_count(out, dims.size());
  for (const DimProgram& dim : dims) put_dim(out, dim);
}

void put_regs(std::string& out, const std::vector<RegIndex>& regs) {
  put_count(out, regs.size());
  for (RegIndex r : regs) append_le(out, r);
}

void put_instruction(std::string& out, const Instruction& in) {
  append_le(out, uint8_t(in.op));
  put_regs(out, in.args);
  put_regs(out, in.dsts);
  switch (in.op) {
    case Opcode::InvokeKernel:
      append_le(out, in.index);
      put_dims(out, in.shape);
      break;
    case Opcode::LoadConst:
    case Opcode::InvokePacked:
      append_le(out, in.index);
      break;
    case Opcode::AllocTensor:
      put_dtype(out, in.dtype);
      put_dims(out, in.shape);
      break;
    case Opcode::MatchShape:
    case Opcode::LoadShape:
      put_dims(out, in.shape);
      break;
    case Opcode::If:
      append_le(out, in.true_target);
      append_le(out, in.false_target);
      break;
    case Opcode::Goto:
      append_le(out, in.true_target);
      break;
    case Opcode::Move:
    case Opcode::Ret:
      break;
  }
}

void put_function(std::string& out, const Function& fn) {
  put_string(out, fn.name);
  put_count(out, fn.params.size());
  for (const InputInfo& param : fn.params) {
    put_string(out, param.name);
    put_dtype(out, param.dtype);
    put_count(out, param.shape.size());
    for (int64_t d : param.shape) append_le(out, d);
  }
  put_count(out, fn.size_vars.size());
  for (const std::string& var : fn.size_vars) put_string(out, var);
  put_count(out, fn.param_dims.size());
  for (const std::vector<DimProgram>& dims : fn.param_dims) put_dims(out, dims);
  append_le(out, fn.num_registers);
  put_count(out, fn.instructions.size());
  for (const Instruction& in : fn.instructions) put_instruction(out, in);
}

// The name under which constant i is stored in the params blob (the bytecode text's name).
std::string constant_name(size_t i) { return "c" + std::to_string(i); }

// ---- Reading ----

// A cursor over untrusted bytes: every read checks what remains first.
class Reader {
 public:
  Reader(std::string_view bytes, const std::string& what) : bytes_(bytes), what_(what) {}

  size_t offset() const { return pos_; }
  uint64_t remaining() const { return bytes_.size() - pos_; }

  template <typename T>
  T read(const char* field) {
    using U = std::make_unsigned_t<T>;
    if (remaining() < sizeof(T))
      throw_error(what_, ": truncated at byte ", pos_, " (reading ", field, ": ", sizeof(T),
                  " bytes needed, ", remaining(), " remain)");
    U value = detail::load_le<U>(bytes_.data() + pos_);
    pos_ += sizeof(T);
    return static_cast<T>(value);
  }

  // A count of items that take at least min_bytes each; more than the rest of the bytes could
  // hold is a truncated (or corrupt) file.
  uint32_t count(const char* field, uint64_t min_bytes) {
    size_t at = pos_;
    uint32_t n = read<uint32_t>(field);
    if (n > remaining() / min_bytes)
      throw_error(what_, ": truncated at byte ", at, " (", field, " is ", n, ", but only ",
                  remaining(), " bytes remain)");
    return n;
  }

  std::string_view take(uint64_t n, const char* field) {
    if (n > remaining())
      throw_error(what_, ": truncated at byte ", pos_, " (reading ", field, ": ", n,
                  " bytes needed, ", remaining(), " remain)");
    std::string_view part = bytes_.substr(pos_, size_t(n));
    pos_ += size_t(n);
    return part;
  }

  std::string string(const char* field) {
    uint32_t length = read<uint32_t>(field);
    return std::string(take(length, field));
  }

  DataType dtype(const char* field) {
    size_t at = pos_;
    DLDataType dl;
    dl.code = read<uint8_t>(field);
    dl.bits = read<uint8_t>(field);
    dl.lanes = read<uint16_t>(field);
    std::optional<DataType> dtype;
    try {
      dtype = DataType::from_dlpack(dl);
    } catch (const Error&) {
    }
    // Registers hold scalar tensors only; a handle is never a tensor's element type.
    if (!dtype || !dtype->is_scalar() || dtype->is_handle())
      throw_error(what_, ": ", field, " at byte ", at, " is not a tensor data type (code ",
                  int(dl.code), ", bits ", int(dl.bits), ", lanes ", dl.lanes, ")");
    return *dtype;
  }

  DimProgram dim(const char* field) {
    DimProgram dim;
    uint32_t steps = count(field, kStepBytes);
    dim.steps.reserve(steps);
    for (uint32_t s = 0; s < steps; ++s) {
      size_t at = pos_;
      uint8_t op = read<uint8_t>(field);
      if (op > kLastDimOp)
        throw_error(what_, ": ", field, " at byte ", at, " has unknown operator ", int(op));
      dim.steps.push_back({DimOp(op), read<int64_t>(field)});
    }
    return dim;
  }

  std::vector<DimProgram> dims(const char* field) {
    size_t at = pos_;
    uint32_t rank = count(field, kDimMinBytes);
    if (rank > uint32_t(detail::kMaxFileDims))
      throw_error(what_, ": ", field, " at byte ", at, " has ", rank, " dims; at most ",
                  detail::kMaxFileDims, " are supported");
    std::vector<DimProgram> dims;
    dims.reserve(rank);
    for (uint32_t d = 0; d < rank; ++d) dims.push_back(dim(field));
    return dims;
  }

  std::vector<RegIndex> regs(const char* field) {
    uint32_t n = count(field, 4);
    std::vector<RegIndex> regs;
    regs.reserve(n);
    for (uint32_t i = 0; i < n; ++i) regs.push_back(read<int32_t>(field));
    return regs;
  }

 private:
  std::string_view bytes_;
  const std::string& what_;
  size_t pos_ = 0;
};

Instruction read_instruction(Reader& in, const std::string& what, const std::string& fn_name,
                             size_t pc) {
  Instruction inst;
  uint8_t op = in.read<uint8_t>("an opcode");
  if (op > kLastOpcode)
    throw_error(what, ": instruction ", pc, " of @", fn_name, " has unknown opcode ", int(op));
  inst.op = Opcode(op);
  inst.args = in.regs("an argument list");
  inst.dsts = in.regs("a destination list");
  switch (inst.op) {
    case Opcode::InvokeKernel:
      inst.index = in.read<int32_t>("an instruction's index");
      inst.shape = in.dims("the size arguments of an invoke_kernel");
      break;
    case Opcode::LoadConst:
    case Opcode::InvokePacked:
      inst.index = in.read<int32_t>("an instruction's index");
      break;
    case Opcode::AllocTensor:
      inst.dtype = in.dtype("the dtype of an alloc_tensor");
      inst.shape = in.dims("the shape of an alloc_tensor");
      break;
    case Opcode::MatchShape:
    case Opcode::LoadShape:
      inst.shape = in.dims("the dims of a match_shape");
      break;
    case Opcode::If:
      inst.true_target = in.read<int32_t>("a jump target");
      inst.false_target = in.read<int32_t>("a jump target");
      break;
    case Opcode::Goto:
      inst.true_target = in.read<int32_t>("a jump target");
      break;
    case Opcode::Move:
    case Opcode::Ret:
      break;
  }
  return inst;
}

Function read_function(Reader& in, const std::string& what) {
  Function fn;
  fn.name = in.string("a function name");
  std::string name = detail::printable(fn.name);
  uint32_t params = in.count("a parameter count", kParamMinBytes);
  fn.params.reserve(params);
  for (uint32_t p = 0; p < params; ++p) {
    InputInfo param;
    param.name = in.string("a parameter name");
    param.dtype = in.dtype("a parameter dtype");
    size_t at = in.offset();
    uint32_t rank = in.count("a parameter rank", 8);
    if (rank > uint32_t(detail::kMaxFileDims))
      throw_error(what, ": parameter ", p, " of @", name, " at byte ", at, " has ", rank,
                  " dims; at most ", detail::kMaxFileDims, " are supported");
    for (uint32_t d = 0; d < rank; ++d) param.shape.push_back(in.read<int64_t>("a parameter dim"));
    fn.params.push_back(std::move(param));
  }
  uint32_t vars = in.count("a size variable count", kStringMinBytes);
  fn.size_vars.reserve(vars);
  for (uint32_t v = 0; v < vars; ++v) fn.size_vars.push_back(in.string("a size variable name"));
  uint32_t param_dims = in.count("a parameter dims count", 4);
  fn.param_dims.reserve(param_dims);
  for (uint32_t p = 0; p < param_dims; ++p) fn.param_dims.push_back(in.dims("parameter dims"));
  fn.num_registers = in.read<int32_t>("a register count");
  uint32_t count = in.count("an instruction count", kInstructionMinBytes);
  fn.instructions.reserve(count);
  for (uint32_t pc = 0; pc < count; ++pc)
    fn.instructions.push_back(read_instruction(in, what, name, pc));
  return fn;
}

// ---- Checking ----

// What is wrong with a dim program over num_vars size variables, or "" when nothing is.
std::string dim_problem(const DimProgram& dim, size_t num_vars) {
  if (dim.steps.empty()) return "is empty";
  int depth = 0;
  for (size_t s = 0; s < dim.steps.size(); ++s) {
    const DimProgram::Step& step = dim.steps[s];
    if (step.op == DimOp::Const || step.op == DimOp::Var) {
      if (step.op == DimOp::Var && (step.value < 0 || uint64_t(step.value) >= num_vars))
        return str_cat("reads size variable ", step.value, " (the function has ", num_vars, ")");
      if (++depth > kMaxDimDepth)
        return str_cat("nests deeper than ", kMaxDimDepth, " at step ", s);
    } else {
      if (depth < 2)
        return str_cat("is unbalanced: step ", s, " applies an operator to ", depth,
                       depth == 1 ? " operand" : " operands");
      --depth;
    }
  }
  if (depth != 1) return str_cat("is unbalanced: it leaves ", depth, " values instead of one");
  return "";
}

// Checks a function's own structure; `where(pc)` names instruction pc in messages.
class FunctionChecker {
 public:
  FunctionChecker(const Executable& exec, const Function& fn, const std::string& what)
      : exec_(exec), fn_(fn), what_(what), name_("@" + detail::printable(fn.name)) {}

  void check() {
    check_signature();
    if (fn_.instructions.empty()) throw_error(what_, ": ", name_, " has no instructions");
    for (size_t pc = 0; pc < fn_.instructions.size(); ++pc) check_instruction(pc);
    if (fn_.instructions.back().op != Opcode::Ret)
      throw_error(what_, ": ", name_, " does not end with ret");
    check_registers_hold_values();
  }

 private:
  std::string where(size_t pc) const {
    return str_cat("instruction ", pc, " of ", name_, " (", opcode_name(fn_.instructions[pc].op),
                   ")");
  }

  void check_dim(const DimProgram& dim, const std::string& place) const {
    std::string problem = dim_problem(dim, fn_.size_vars.size());
    if (!problem.empty()) throw_error(what_, ": ", place, " ", problem);
  }

  void check_signature() const {
    const size_t params = fn_.params.size();
    if (fn_.num_registers < 0 || size_t(fn_.num_registers) < params)
      throw_error(what_, ": ", name_, " has ", params, " parameters but ", fn_.num_registers,
                  " registers");
    // Every register but a parameter is written by an instruction before it is read, so more
    // registers than destinations is corruption (and would only cost the VM memory).
    size_t writable = params;
    for (const Instruction& in : fn_.instructions) writable += in.dsts.size();
    if (size_t(fn_.num_registers) > writable)
      throw_error(what_, ": ", name_, " declares ", fn_.num_registers,
                  " registers, but its parameters and instructions use at most ", writable);
    for (size_t p = 0; p < params; ++p)
      for (int64_t d : fn_.params[p].shape)
        if (d < -1)
          throw_error(what_, ": parameter '", detail::printable(fn_.params[p].name), "' of ", name_,
                      " has dim ", d);
    if (!fn_.param_dims.empty() && fn_.param_dims.size() != params)
      throw_error(what_, ": ", name_, " has dims for ", fn_.param_dims.size(), " of its ", params,
                  " parameters");
    for (size_t p = 0; p < fn_.param_dims.size(); ++p) {
      const InputInfo& param = fn_.params[p];
      const std::vector<DimProgram>& dims = fn_.param_dims[p];
      std::string label = "parameter '" + detail::printable(param.name) + "' of " + name_;
      if (dims.size() != param.shape.size())
        throw_error(what_, ": ", label, " has ", param.shape.size(), " dims but ", dims.size(),
                    " dim programs");
      for (size_t d = 0; d < dims.size(); ++d) {
        check_dim(dims[d], str_cat("dim ", d, " of ", label));
        // The VM checks static dims against the shape and symbolic ones against the programs:
        // the two must say the same.
        int64_t expected = dims[d].is_static() ? dims[d].steps[0].value : -1;
        if (param.shape[d] != expected)
          throw_error(what_, ": dim ", d, " of ", label, " is ", param.shape[d],
                      " in the shape but ", dims[d].to_string(fn_.size_vars), " in its program");
      }
    }
  }

  void check_register(RegIndex r, size_t pc) const {
    if (r < 0 || r >= fn_.num_registers)
      throw_error(what_, ": ", where(pc), " uses register r", r, " (the function has ",
                  fn_.num_registers, ")");
  }

  void check_target(int32_t target, size_t pc) const {
    size_t n = fn_.instructions.size();
    if (target < 0 || size_t(target) >= n)
      throw_error(what_, ": ", where(pc), " jumps to ", target, " (the function has ", n, ")");
    if (size_t(target) > pc) return;
    // Only a goto jumps back, closing a loop, and the loop must have a way out: an if between
    // the target and the goto that jumps past the goto. (A loop whose condition never turns
    // false still runs forever, as the model asks.)
    if (fn_.instructions[pc].op != Opcode::Goto)
      throw_error(what_, ": ", where(pc), " jumps back to ", target,
                  " (only a goto closes a loop)");
    for (size_t at = size_t(target); at < pc; ++at) {
      const Instruction& in = fn_.instructions[at];
      if (in.op == Opcode::If && (size_t(in.true_target) > pc || size_t(in.false_target) > pc))
        return;
    }
    throw_error(what_, ": ", where(pc), " jumps back to ", target, " into a loop that has no exit");
  }

  void check_counts(size_t pc, size_t args, size_t dsts) const {
    const Instruction& in = fn_.instructions[pc];
    if (in.args.size() != args || in.dsts.size() != dsts)
      throw_error(what_, ": ", where(pc), " has ", in.args.size(), " arguments and ",
                  in.dsts.size(), " destinations, expected ", args, " and ", dsts);
  }

  void check_index(size_t pc, size_t size, const char* kind) const {
    int32_t index = fn_.instructions[pc].index;
    if (index < 0 || size_t(index) >= size)
      throw_error(what_, ": ", where(pc), " refers to ", kind, " ", index, " (the executable has ",
                  size, ")");
  }

  void check_instruction(size_t pc) const {
    const Instruction& in = fn_.instructions[pc];
    for (RegIndex r : in.args) check_register(r, pc);
    for (RegIndex r : in.dsts) check_register(r, pc);
    switch (in.op) {
      case Opcode::LoadConst:
        check_counts(pc, 0, 1);
        check_index(pc, exec_.constants.size(), "constant");
        break;
      case Opcode::AllocTensor: {
        check_counts(pc, 0, 1);
        std::vector<int64_t> static_shape;
        for (size_t d = 0; d < in.shape.size(); ++d) {
          check_dim(in.shape[d], str_cat("dim ", d, " of ", where(pc)));
          if (in.shape[d].is_static()) static_shape.push_back(in.shape[d].steps[0].value);
        }
        int64_t bytes = 0;
        if (!detail::checked_byte_size(static_shape, in.dtype.bytes(), &bytes))
          throw_error(what_, ": ", where(pc), " allocates a tensor with static dims ",
                      shape_to_string(static_shape), ", negative or too large to address");
        break;
      }
      case Opcode::InvokeKernel:
        check_index(pc, exec_.kernel_names.size(), "kernel");
        for (size_t d = 0; d < in.shape.size(); ++d)
          check_dim(in.shape[d], str_cat("size argument ", d, " of ", where(pc)));
        break;
      case Opcode::InvokePacked:
        check_index(pc, exec_.runtime_funcs.size(), "runtime function");
        if (exec_.runtime_funcs[size_t(in.index)].destination_passing && !in.dsts.empty())
          throw_error(what_, ": ", where(pc),
                      " calls a destination-passing runtime function with destinations");
        break;
      case Opcode::MatchShape:
      case Opcode::LoadShape:
        check_counts(pc, 1, 0);
        for (size_t d = 0; d < in.shape.size(); ++d)
          check_dim(in.shape[d], str_cat("position ", d, " of ", where(pc)));
        break;
      case Opcode::If:
        check_counts(pc, 1, 0);
        check_target(in.true_target, pc);
        check_target(in.false_target, pc);
        break;
      case Opcode::Goto:
        check_counts(pc, 0, 0);
        check_target(in.true_target, pc);
        break;
      case Opcode::Move:
        if (in.args.size() != in.dsts.size())
          throw_error(what_, ": ", where(pc), " moves ", in.args.size(), " registers into ",
                      in.dsts.size());
        break;
      case Opcode::Ret:
        if (!in.dsts.empty())
          throw_error(what_, ": ", where(pc), " has ", in.dsts.size(), " destinations, expected 0");
        break;
    }
  }

  // Every register an instruction reads (and the output storage a kernel writes into) must hold
  // a tensor on every path that reaches it; otherwise the VM would hand a null tensor to a
  // kernel. Passes in instruction order until nothing changes (one pass where every jump goes
  // forward; a loop's back edge asks for more), then a last pass checks the reads. Registers
  // are taken 64 at a time, one bit each, which keeps the memory at one word per instruction
  // however many registers there are.
  void check_registers_hold_values() const {
    const size_t n = fn_.instructions.size();
    const size_t params = fn_.params.size();
    std::vector<uint64_t> incoming(n);
    std::vector<char> reached(n);
    size_t bad_pc = n;
    RegIndex bad_reg = -1;
    for (int32_t base = 0; base < fn_.num_registers; base += 64) {
      auto bit = [base](RegIndex r) -> uint64_t {
        return r >= base && r - base < 64 ? uint64_t(1) << (r - base) : 0;
      };
      std::fill(incoming.begin(), incoming.end(), ~uint64_t(0));
      std::fill(reached.begin(), reached.end(), 0);
      reached[0] = 1;
      incoming[0] = 0;
      for (size_t p = 0; p < params; ++p) incoming[0] |= bit(RegIndex(p));
      bool changed = false;
      auto flow = [&](size_t to, uint64_t defined) {
        const uint64_t before = incoming[to];
        incoming[to] &= defined;
        changed |= incoming[to] != before || !reached[to];
        reached[to] = 1;
      };
      auto pass = [&](bool check) {
        for (size_t pc = 0; pc < n && pc < bad_pc; ++pc) {
          if (!reached[pc]) continue;  // dead code never runs
          const Instruction& in = fn_.instructions[pc];
          uint64_t defined = incoming[pc];
          auto read = [&](RegIndex r) {
            if (check && (bit(r) & ~defined) && pc < bad_pc) {
              bad_pc = pc;
              bad_reg = r;
            }
          };
          for (RegIndex r : in.args) read(r);
          if (in.op == Opcode::InvokeKernel) {
            for (RegIndex r : in.dsts) read(r);  // destination passing: the storage must exist
          } else {
            for (RegIndex r : in.dsts) defined |= bit(r);
          }
          if (in.op == Opcode::Goto) {
            flow(size_t(in.true_target), defined);
          } else if (in.op == Opcode::If) {
            flow(size_t(in.true_target), defined);
            flow(size_t(in.false_target), defined);
          } else if (in.op != Opcode::Ret) {
            flow(pc + 1, defined);  // in range: the last instruction is a ret
          }
        }
      };
      do {
        changed = false;
        pass(false);
      } while (changed);
      pass(true);
    }
    if (bad_pc < n)
      throw_error(what_, ": ", where(bad_pc), " reads r", bad_reg,
                  ", which holds no value on some path to it");
  }

  const Executable& exec_;
  const Function& fn_;
  const std::string& what_;
  std::string name_;
};

}  // namespace

RuntimeFunc destination_passing_func(const std::string& name) {
  RuntimeFunc func;
  func.name = name;
  func.destination_passing = true;
  func.func = PackedFunc(
      [name](const PackedArgs& args) -> Value {
        std::optional<PackedFunc> target = find_global(name);
        if (!target) throw_error("call_dps_packed: no function is registered under '", name, "'");
        target->call(args.values());
        return Value();
      },
      name);
  return func;
}

std::string save_executable(const Executable& exec) {
  // Runtime functions travel by name: each must be the function the registry holds under it,
  // which a loader in another process can find again.
  for (const RuntimeFunc& func : exec.runtime_funcs) {
    if (func.destination_passing) continue;  // looked up by name at each call anyway
    std::optional<PackedFunc> registered = find_global(func.name);
    if (!registered || !registered->same_as(func.func))
      throw_error("cannot save the VM executable: runtime function '", func.name,
                  "' is not a registered global function (a closure made at compile time, such "
                  "as a group evaluated by the reference kernels, cannot be saved)");
  }
  NamedTensors constants;
  constants.reserve(exec.constants.size());
  for (size_t i = 0; i < exec.constants.size(); ++i)
    constants.emplace_back(constant_name(i), exec.constants[i]);
  std::string constant_bytes;
  try {
    constant_bytes = save_params(constants);
  } catch (const Error& e) {
    throw_error("cannot save the VM executable: constants: ", e.what());
  }

  std::string out(kExecutableMagic, sizeof(kExecutableMagic));
  append_le(out, kExecutableVersion);
  put_count(out, exec.functions.size());
  for (const Function& fn : exec.functions) put_function(out, fn);
  append_le(out, uint64_t(constant_bytes.size()));
  out += constant_bytes;
  put_count(out, exec.kernel_names.size());
  for (const std::string& name : exec.kernel_names) put_string(out, name);
  put_count(out, exec.runtime_funcs.size());
  for (const RuntimeFunc& func : exec.runtime_funcs) {
    put_string(out, func.name);
    put_string(out, func.note);
    append_le(out, uint8_t(func.destination_passing));
  }
  return out;
}

Executable load_executable(std::string_view bytes, Module lib, const std::string& what) {
  Reader in(bytes, what);
  std::string_view magic = in.take(sizeof(kExecutableMagic), "the magic");
  if (magic != std::string_view(kExecutableMagic, sizeof(kExecutableMagic)))
    throw_error(what, ": bad magic (not a VM executable)");
  uint32_t version = in.read<uint32_t>("the version");
  if (version != kExecutableVersion)
    throw_error(what, ": version ", version, ", expected ", kExecutableVersion);

  Executable exec;
  uint32_t functions = in.count("the function count", kFunctionMinBytes);
  if (functions == 0) throw_error(what, ": the executable has no functions");
  exec.functions.reserve(functions);
  for (uint32_t f = 0; f < functions; ++f) exec.functions.push_back(read_function(in, what));

  uint64_t constant_size = in.read<uint64_t>("the size of the constants");
  std::string_view constant_bytes = in.take(constant_size, "the constants");
  NamedTensors constants = load_params(constant_bytes, what + ": constants");
  for (size_t i = 0; i < constants.size(); ++i) {
    if (constants[i].first != constant_name(i))
      throw_error(what, ": constant ", i, " is named '", detail::printable(constants[i].first),
                  "', expected '", constant_name(i), "'");
    exec.constants.push_back(std::move(constants[i].second));
  }

  uint32_t kernels = in.count("the kernel count", kStringMinBytes);
  exec.kernel_names.reserve(kernels);
  for (uint32_t k = 0; k < kernels; ++k) exec.kernel_names.push_back(in.string("a kernel name"));
  uint32_t runtime_funcs = in.count("the runtime function count", 2 * kStringMinBytes + 1);
  exec.runtime_funcs.resize(runtime_funcs);
  for (RuntimeFunc& func : exec.runtime_funcs) {
    func.name = in.string("a runtime function name");
    func.note = in.string("a runtime function note");
    uint8_t convention = in.read<uint8_t>("a runtime function's calling convention");
    if (convention > 1)
      throw_error(what, ": runtime function '", detail::printable(func.name),
                  "' has calling convention ", int(convention), ", expected 0 or 1");
    func.destination_passing = convention == 1;
  }
  if (in.remaining() != 0)
    throw_error(what, ": ", in.remaining(), " trailing bytes after the runtime functions, at byte ",
                in.offset());

  for (const Function& fn : exec.functions) FunctionChecker(exec, fn, what).check();
  // Code is looked up last: the bytes are known to be sound by then.
  if (kernels != 0 && !lib.defined())
    throw_error(what, ": the executable names ", kernels, " kernels, but there is no library");
  for (const std::string& name : exec.kernel_names)
    if (!lib.get_function(name))
      throw_error(what, ": kernel '", detail::printable(name), "' is not in the kernel library");
  for (RuntimeFunc& func : exec.runtime_funcs) {
    if (func.destination_passing) {
      func.func = destination_passing_func(func.name).func;
      continue;
    }
    std::optional<PackedFunc> registered = find_global(func.name);
    if (!registered)
      throw_error(what, ": runtime function '", detail::printable(func.name),
                  "' is not registered in this process");
    func.func = *std::move(registered);
  }
  exec.lib = std::move(lib);
  return exec;
}

}  // namespace anvil::vm
