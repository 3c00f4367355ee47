// Dims computed at run time (vm::DimProgram): a small stack machine over the size variables
// that the VM binds from its inputs' shapes.
#include <algorithm>
#include <limits>
#include <string>

#include "anvil/runtime/vm_executable.h"
#include "anvil/support/error.h"

namespace anvil::vm {
namespace {

using Op = DimProgram::Op;

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

}  // namespace

int64_t DimProgram::evaluate(const std::vector<int64_t>& size_vars) const {
  // Dims are short expressions; a small fixed stack keeps evaluation allocation-free.
  constexpr size_t kMaxDepth = 16;
  int64_t stack[kMaxDepth];
  size_t depth = 0;
  for (const Step& step : steps) {
    if (step.op == Op::Const || step.op == Op::Var) {
      if (depth == kMaxDepth) throw_error("vm: a dim program nests deeper than ", kMaxDepth);
      if (step.op == Op::Var && (step.value < 0 || size_t(step.value) >= size_vars.size()))
        throw_error("vm: a dim program reads size variable ", step.value, " of ", size_vars.size());
      stack[depth++] = step.op == Op::Const ? step.value : size_vars[size_t(step.value)];
      continue;
    }
    if (depth < 2) throw_error("vm: a dim program applies an operator to too few operands");
    int64_t b = stack[--depth];
    int64_t& a = stack[depth - 1];
    // Sizes come from input shapes, so overflow is bad input, not a bug: checked everywhere.
    bool overflow = false;
    switch (step.op) {
      case Op::Add:
        overflow = __builtin_add_overflow(a, b, &a);
        break;
      case Op::Sub:
        overflow = __builtin_sub_overflow(a, b, &a);
        break;
      case Op::Mul:
        overflow = __builtin_mul_overflow(a, b, &a);
        break;
      case Op::FloorDiv:
      case Op::FloorMod:
        if (b == 0) throw_error("vm: a dim divides by zero");
        if (b == -1 && a == std::numeric_limits<int64_t>::min()) {
          overflow = step.op == Op::FloorDiv;
          a = 0;
          break;
        }
        a = step.op == Op::FloorDiv ? floor_div(a, b) : floor_mod(a, b);
        break;
      case Op::Min:
        a = std::min(a, b);
        break;
      case Op::Max:
        a = std::max(a, b);
        break;
      case Op::Broadcast:
        a = a == 1 ? b : (b == 1 || a == b) ? a : -1;
        break;
      default:
        throw_error("vm: a dim program holds an unknown operator ", int(step.op));
    }
    if (overflow) throw_error("vm: a dim overflows int64");
  }
  if (depth != 1) throw_error("vm: a dim program leaves ", depth, " values instead of one");
  return stack[0];
}

std::string DimProgram::to_string(const std::vector<std::string>& names) const {
  std::vector<std::string> stack;
  for (const Step& step : steps) {
    if (step.op == Op::Const) {
      stack.push_back(std::to_string(step.value));
      continue;
    }
    if (step.op == Op::Var) {
      bool known = step.value >= 0 && size_t(step.value) < names.size();
      stack.push_back(known ? names[size_t(step.value)] : "$" + std::to_string(step.value));
      continue;
    }
    if (stack.size() < 2) return "<bad dim>";
    std::string b = stack.back();
    stack.pop_back();
    std::string a = stack.back();
    const char* infix = step.op == Op::Add   ? " + "
                        : step.op == Op::Sub ? " - "
                        : step.op == Op::Mul ? " * "
                                             : nullptr;
    const char* call = step.op == Op::FloorDiv   ? "floordiv"
                       : step.op == Op::FloorMod ? "floormod"
                       : step.op == Op::Min      ? "min"
                       : step.op == Op::Max      ? "max"
                                                 : "broadcast";
    stack.back() = infix ? "(" + a + infix + b + ")" : std::string(call) + "(" + a + ", " + b + ")";
  }
  if (stack.size() != 1) return "<bad dim>";
  std::string text = stack[0];
  // The outermost parentheses say nothing.
  if (text.size() > 2 && text.front() == '(' && text.back() == ')') {
    int open = 0;
    bool wraps = true;
    for (size_t i = 0; i + 1 < text.size(); ++i) {
      open += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
      if (open == 0) wraps = false;
    }
    if (wraps) text = text.substr(1, text.size() - 2);
  }
  return text;
}

bool operator==(const DimProgram& a, const DimProgram& b) {
  return std::equal(a.steps.begin(), a.steps.end(), b.steps.begin(), b.steps.end(),
                    [](const DimProgram::Step& x, const DimProgram::Step& y) {
                      return x.op == y.op && x.value == y.value;
                    });
}

}  // namespace anvil::vm
