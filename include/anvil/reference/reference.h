// The reference executor: a plain, obviously correct kernel for every
// operator and an interpreter that evaluates a typed IRModule with them. It
// is the oracle for tests and for constant folding; clarity wins over speed.
#pragma once

#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "anvil/ir/ir.h"

namespace anvil::reference {

// What a kernel sees: the input tensors (an omitted optional input is an
// undefined Tensor), the call's attrs, and the call's inferred output type
// (its dims may be symbolic; kernels compute concrete shapes themselves).
struct KernelArgs {
  std::span<const Tensor> inputs;
  const ir::AttrsNode* attrs;
  const ir::Type& out_type;

  template <typename T>
  const T& attrs_as() const {
    return *static_cast<const T*>(attrs);
  }
  // The dtype of a tensor-typed output (field `index` of a tuple output).
  DataType out_dtype(size_t index = 0) const;
};

// Computes an op's outputs: one tensor, or one per field of a tuple output.
using ReferenceKernel = std::function<std::vector<Tensor>(const KernelArgs&)>;

// Attaches the reference kernel of an op to its row of the op table.
void register_kernel(std::string_view op_name, ReferenceKernel kernel);

// The reference kernel of an op, or nullptr; registers every family on first use.
const ReferenceKernel* find_kernel(std::string_view op_name);

// Names of the ops in the op table that have no reference kernel.
std::vector<std::string> ops_without_kernel();

// A runtime value: a tensor, or a tuple of values.
struct Value {
  Tensor tensor;
  std::vector<Value> fields;
  bool is_tuple = false;

  static Value of(Tensor t) { return Value{std::move(t), {}, false}; }
  static Value tuple(std::vector<Value> items) { return Value{Tensor(), std::move(items), true}; }
};

// Evaluates one op call on concrete inputs (constant folding uses this).
std::vector<Tensor> evaluate_call(const ir::CallNode& call, std::span<const Tensor> inputs);

// Runs the functions of a module with reference kernels.
class Interpreter {
 public:
  // The module must be typed (ir::infer_type).
  explicit Interpreter(ir::IRModule mod);

  // Calls the named function with one value per parameter; returns its
  // outputs flattened (a tuple result gives one tensor per field).
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, std::string_view function = "main");

  // Calls the named function with values, returning its value unflattened.
  Value call(std::string_view function, std::vector<Value> args);

 private:
  ir::IRModule mod_;
};

// Flattens nested tuples into their tensors, in order.
std::vector<Tensor> flatten(const Value& value);

// All elements of t as int64 in row-major order, the way the kernels read integer operands:
// bool as 0/1, uint64 by bit pattern, floats truncated toward zero.
std::vector<int64_t> to_int64s(const Tensor& t);

}  // namespace anvil::reference
