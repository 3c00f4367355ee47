// The linear-algebra family. linalg.det runs as a runtime function of the VM
// (anvil/runtime/builtins.h): LU elimination is a chain of dependent steps with no
// data-parallel form worth a compute for the matrix sizes models use.
#include "anvil/runtime/builtins.h"
#include "ir/op/families.h"
#include "ir/op/transform_util.h"

namespace anvil::ir {
namespace {

using namespace relation;

// x [..., M, M] of float32 or float64 -> [...].
Type det_relation(const RelationArgs& args) {
  const TensorTypeNode& x = args.tensor(0);
  if (x.dtype != DataType::float32() && x.dtype != DataType::float64())
    throw_error(args.arg_name(0), " must be float32 or float64, got ", describe(x));
  if (!x.shape) return TensorTypeNode::make_unknown_rank(x.dtype);
  const std::vector<Dim>& shape = *x.shape;
  if (shape.size() < 2)
    throw_error(args.arg_name(0), " must have rank 2 or more, got ", describe(x));
  if (provably_different(shape[shape.size() - 1], shape[shape.size() - 2]))
    throw_error(args.arg_name(0), "'s last two dims must be equal (square matrices), got ",
                describe(x));
  return TensorTypeNode::make(std::vector<Dim>(shape.begin(), shape.end() - 2), x.dtype);
}

}  // namespace

void register_linalg_ops(OpTable& table) {
  table.add("linalg.det")
      .describe(
          "The determinant of each square matrix of the last two dims (ONNX Det), by LU "
          "decomposition with partial pivoting.")
      .inputs({"data"})
      .type_relation(det_relation)
      .fusion_pattern(OpPattern::Opaque)
      .set_extra("runtime_function", std::string(builtins::kDeterminant));
}

}  // namespace anvil::ir
