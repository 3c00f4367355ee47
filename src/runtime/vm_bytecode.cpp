// The text form of VM bytecode (docs/vm.md): one line per instruction, numbered, so that jump
// targets can be read off.
#include <string>

#include "anvil/runtime/vm_executable.h"
#include "anvil/support/error.h"

namespace anvil::vm {
namespace {

std::string reg(RegIndex r) { return "r" + std::to_string(r); }

// "r1, r2".
std::string reg_list(const std::vector<RegIndex>& regs) {
  std::string text;
  for (RegIndex r : regs) text += (text.empty() ? "" : ", ") + reg(r);
  return text;
}

// "(2, ?, 3)": a dynamic dim (-1) prints as ?.
std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
  return text + ")";
}

std::string type_text(const std::vector<int64_t>& shape, DataType dtype) {
  return "Tensor[" + shape_text(shape) + ", " + dtype.to_string() + "]";
}

// "Tensor[(batch, 64), float32]": dims over the function's size variables.
std::string type_text(const std::vector<DimProgram>& shape, DataType dtype,
                      const std::vector<std::string>& size_vars) {
  std::string text = "Tensor[(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + shape[i].to_string(size_vars);
  return text + "), " + dtype.to_string() + "]";
}

std::string instruction_text(const Executable& exec, const Function& fn, const Instruction& in) {
  switch (in.op) {
    case Opcode::LoadConst:
      return reg(in.dsts.at(0)) + " = load_const c" + std::to_string(in.index);
    case Opcode::AllocTensor:
      return reg(in.dsts.at(0)) + " = alloc_tensor " + type_text(in.shape, in.dtype, fn.size_vars);
    case Opcode::InvokeKernel: {
      std::string text = "invoke_kernel " + exec.kernel_names.at(size_t(in.index)) + "(" +
                         reg_list(in.args) + ") -> (" + reg_list(in.dsts) + ")";
      for (size_t i = 0; i < in.shape.size(); ++i)
        text += (i ? ", " : " sizes ") + in.shape[i].to_string(fn.size_vars);
      return text;
    }
    case Opcode::InvokePacked:
      return reg_list(in.dsts) + " = invoke_packed " +
             exec.runtime_funcs.at(size_t(in.index)).name + "(" + reg_list(in.args) + ")" +
             (exec.runtime_funcs.at(size_t(in.index)).note.empty()
                  ? ""
                  : "  // " + exec.runtime_funcs.at(size_t(in.index)).note);
    case Opcode::If:
      return "if " + reg(in.args.at(0)) + " then " + std::to_string(in.true_target) + " else " +
             std::to_string(in.false_target);
    case Opcode::Goto:
      return "goto " + std::to_string(in.true_target);
    case Opcode::Move:
      return reg_list(in.dsts) + " = move " + reg_list(in.args);
    case Opcode::Ret:
      return "ret " + reg_list(in.args);
    case Opcode::MatchShape:
    case Opcode::LoadShape: {
      std::string text = std::string(opcode_name(in.op)) + " " + reg(in.args.at(0)) + " (";
      for (size_t i = 0; i < in.shape.size(); ++i)
        text += (i ? ", " : "") + in.shape[i].to_string(fn.size_vars);
      return text + ")";
    }
  }
  return "?";
}

}  // namespace

const char* opcode_name(Opcode op) {
  switch (op) {
    case Opcode::LoadConst:
      return "load_const";
    case Opcode::AllocTensor:
      return "alloc_tensor";
    case Opcode::InvokeKernel:
      return "invoke_kernel";
    case Opcode::InvokePacked:
      return "invoke_packed";
    case Opcode::If:
      return "if";
    case Opcode::Goto:
      return "goto";
    case Opcode::Move:
      return "move";
    case Opcode::Ret:
      return "ret";
    case Opcode::MatchShape:
      return "match_shape";
    case Opcode::LoadShape:
      return "load_shape";
  }
  return "?";
}

std::string print_bytecode(const Executable& exec) {
  std::string text;
  for (const Function& fn : exec.functions) {
    text += "def @" + fn.name + "(";
    for (size_t i = 0; i < fn.params.size(); ++i)
      text +=
          (i ? ", " : "") + std::string("%") + fn.params[i].name + ": " +
          (i < fn.param_dims.size() ? type_text(fn.param_dims[i], fn.params[i].dtype, fn.size_vars)
                                    : type_text(fn.params[i].shape, fn.params[i].dtype));
    text += ") {  // " + std::to_string(fn.num_registers) + " registers\n";
    for (size_t pc = 0; pc < fn.instructions.size(); ++pc)
      text +=
          "  " + std::to_string(pc) + ": " + instruction_text(exec, fn, fn.instructions[pc]) + "\n";
    text += "}\n";
  }
  for (size_t c = 0; c < exec.constants.size(); ++c)
    text += "c" + std::to_string(c) + ": " +
            type_text(exec.constants[c].shape_vector(), exec.constants[c].dtype()) + "\n";
  return text;
}

}  // namespace anvil::vm
