// What a model costs: per op call and in total, the multiply-accumulates, floating-point
// operations, parameters and activation bytes, computed from the inferred types of the graph IR
// (what thop and tflite_flops report, built in). `anvil analyze` prints it; the graph codegen
// attaches each kernel's FLOPs so that profiles can show GFLOP/s. The counting conventions are
// written down in docs/analysis.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "anvil/ir/ir.h"

namespace anvil::analysis {

// The cost of one op call (or a sum of them).
struct OpCost {
  // Multiply-accumulates of convolutions (plain, grouped, transposed, blocked, deformable),
  // dense, matmul, batch_matmul and einsum (thop's and fvcore's convention: bias adds and other
  // ops count none).
  int64_t macs = 0;
  // Floating-point operations: 2 per MAC plus the elementwise, normalization, pooling, softmax
  // and reduction work of docs/analysis.md.
  int64_t flops = 0;
  // Elements of the call's constant operands (rank 1 and up) and of the operands that are model
  // parameters.
  int64_t params = 0;
  // Bytes of the call's outputs (every field of a tuple output).
  int64_t activation_bytes = 0;

  OpCost& operator+=(const OpCost& other);
};

// The cost of one call whose types are inferred: a call of an op, or of a fused (primitive)
// function, whose work is the sum of the calls in its body. Symbolic dims count as 1.
// `operand_is_param[i]` says that non-constant operand i is a model parameter (missing entries
// say no). Throws Error when the call carries no inferred type.
OpCost call_cost(const ir::CallNode& call, const std::vector<bool>& operand_is_param = {});

// One row of a model summary: a call of @main in execution order.
struct LayerCost {
  std::string name;                // "%12" as print-ir numbers steps, or the bound variable
  std::string op;                  // the op name; "fused(nn.conv2d, add, nn.relu)" for a group
  std::vector<int64_t> out_shape;  // of the first output (-1 for a symbolic dim)
  OpCost cost;
};

// Per-layer costs of @main of a module and their total; the module is typed first when its
// types are missing. `param_names` are the names of @main's parameters that are weights (an
// imported model's params), counted as parameters. Each distinct weight counts once in
// total.params, however many layers read it; the other totals are sums over the layers.
struct ModelCost {
  std::vector<LayerCost> layers;
  OpCost total;
};
ModelCost model_cost(const ir::IRModule& mod, const std::vector<std::string>& param_names = {});

// The FLOPs of a function (a fused group: every op call in its body, nested functions
// included). Types are inferred from the parameters' annotations when the body is untyped.
int64_t function_flops(const ir::FunctionNode& fn);

}  // namespace anvil::analysis
