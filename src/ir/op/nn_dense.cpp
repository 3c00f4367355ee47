// Matrix products: nn.dense, nn.matmul, nn.batch_matmul, numpy-style matmul
// (ONNX MatMul), and nn.bias_add, the epilogue that follows them.
#include "anvil/ir/attrs/nn.h"
#include "ir/op/families.h"
#include "ir/op/nn_util.h"

namespace anvil::ir {
namespace {

// The tensor type of input i, or null when its rank is unknown.
const TensorTypeNode* known_rank(const RelationArgs& args, size_t i) {
  const auto* t = as<TensorTypeNode>(args.inputs[i]);
  if (!t) throw_error(args.arg_name(i), " must be a tensor, got ", type_to_string(args.inputs[i]));
  return t->shape ? t : nullptr;
}

void expect_min_rank(const RelationArgs& args, size_t i, size_t rank, const char* why) {
  const TensorTypeNode* t = known_rank(args, i);
  if (t && t->shape->size() < rank)
    throw_error(args.arg_name(i), " must have rank at least ", rank, " (", why, "), got ",
                relation::describe(*t));
}

void expect_exact_rank(const RelationArgs& args, size_t i, size_t rank, const char* why) {
  const TensorTypeNode* t = known_rank(args, i);
  if (t && t->shape->size() != rank)
    throw_error(args.arg_name(i), " must have rank ", rank, " (", why, "), got ",
                relation::describe(*t));
}

// The reduced dimension must agree between the two operands.
void check_reduction(const RelationArgs& args, const Dim& a_size, const char* a_what,
                     const Dim& b_size, const char* b_what) {
  if (nn::provably_different(a_size, b_size))
    throw_error(args.arg_name(1), " has ", b_size.to_string(), " ", b_what, " but ",
                args.arg_name(0), " has ", a_size.to_string(), " ", a_what, ": ",
                nn::inputs_text(args));
}

const char* rows_or_columns(bool rows) { return rows ? "rows" : "columns"; }

// The output feature count: the weight's, checked against the units attribute.
Dim units_dim(const RelationArgs& args, const std::optional<int64_t>& units, const Dim& from_b) {
  if (!units) return from_b;
  if (*units < 1) throw_error("attribute 'units' must be positive, got ", *units);
  if (nn::provably_different(from_b, *units))
    throw_error("attribute 'units' = ", *units, " but ", args.arg_name(1), " gives ",
                from_b.to_string(), " output features: ", nn::inputs_text(args));
  return from_b.is_int() ? from_b : Dim(*units);
}

// Broadcast of batch dims, with a message naming both operands.
std::vector<Dim> broadcast_batch(const RelationArgs& args, const std::vector<Dim>& a,
                                 const std::vector<Dim>& b) {
  try {
    return relation::broadcast_shapes(a, b);
  } catch (const Error&) {
    throw_error("batch dims ", dims_to_string(a), " of ", args.arg_name(0), " and ",
                dims_to_string(b), " of ", args.arg_name(1),
                " do not broadcast: ", nn::inputs_text(args));
  }
}

// data (..., K) times a weight of `units` columns reducing over `weight_k`: (..., units).
Type features_times_weight(const RelationArgs& args, DataType dtype, const Dim& weight_k,
                           const Dim& units) {
  const TensorTypeNode* data = known_rank(args, 0);
  if (!data) return TensorTypeNode::make_unknown_rank(dtype);
  std::vector<Dim> out = *data->shape;
  check_reduction(args, out.back(), "input features", weight_k, "input features");
  out.back() = units;
  return TensorTypeNode::make(std::move(out), dtype);
}

Type dense_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<DenseAttrs>();
  DataType dtype = nn::product_dtype(args, 0, 1, a.out_dtype);
  expect_min_rank(args, 0, 1, "the last axis holds the input features");
  expect_exact_rank(args, 1, 2, "units, input features");
  std::vector<Dim> weight = nn::shape_or_any(args, 1, 2);
  return features_times_weight(args, dtype, weight[1], units_dim(args, a.units, weight[0]));
}

// data (..., K) times a weight packed for the x86 dense schedule: (N / b, K, b), where
// weight[n / b, k, n % b] is the element (k, n) of the (K, N) matrix, so one block of b output
// columns reads one contiguous (K, b) panel.
Type dense_pack_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<DenseAttrs>();
  DataType dtype = nn::product_dtype(args, 0, 1, a.out_dtype);
  expect_min_rank(args, 0, 1, "the last axis holds the input features");
  expect_exact_rank(args, 1, 3, "column blocks, input features, block");
  std::vector<Dim> weight = nn::shape_or_any(args, 1, 3);
  Dim columns = weight[0].is_int() && weight[2].is_int()
                    ? Dim(*weight[0].as_int() * *weight[2].as_int())
                    : Dim::any();
  return features_times_weight(args, dtype, weight[1], units_dim(args, a.units, columns));
}

Type matmul_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<MatmulAttrs>();
  DataType dtype = nn::product_dtype(args, 0, 1, a.out_dtype);
  expect_min_rank(args, 0, a.transpose_a ? 2 : 1,
                  a.transpose_a ? "transpose_a reads (..., K, M)" : "the last axis is reduced");
  expect_exact_rank(args, 1, 2, a.transpose_b ? "N, K" : "K, N");
  std::vector<Dim> b = nn::shape_or_any(args, 1, 2);
  Dim reduce_b = a.transpose_b ? b[1] : b[0];
  Dim units = units_dim(args, a.units, a.transpose_b ? b[0] : b[1]);
  const TensorTypeNode* tensor_a = known_rank(args, 0);
  if (!tensor_a) return TensorTypeNode::make_unknown_rank(dtype);
  std::vector<Dim> out = *tensor_a->shape;
  size_t last = out.size() - 1;
  Dim reduce_a = a.transpose_a ? out[last - 1] : out[last];
  check_reduction(args, reduce_a, rows_or_columns(a.transpose_a), reduce_b,
                  rows_or_columns(!a.transpose_b));
  if (a.transpose_a) out[last - 1] = out[last];
  out[last] = units;
  return TensorTypeNode::make(std::move(out), dtype);
}

Type batch_matmul_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<BatchMatmulAttrs>();
  DataType dtype = nn::product_dtype(args, 0, 1, a.out_dtype);
  expect_exact_rank(args, 0, 3, a.transpose_a ? "batch, K, M" : "batch, M, K");
  expect_exact_rank(args, 1, 3, a.transpose_b ? "batch, N, K" : "batch, K, N");
  std::vector<Dim> x = nn::shape_or_any(args, 0, 3), y = nn::shape_or_any(args, 1, 3);
  Dim m = a.transpose_a ? x[2] : x[1], k_x = a.transpose_a ? x[1] : x[2];
  Dim n = a.transpose_b ? y[1] : y[2], k_y = a.transpose_b ? y[2] : y[1];
  check_reduction(args, k_x, rows_or_columns(a.transpose_a), k_y, rows_or_columns(!a.transpose_b));
  std::vector<Dim> batch = broadcast_batch(args, {x[0]}, {y[0]});
  return TensorTypeNode::make({batch[0], m, n}, dtype);
}

// numpy.matmul: a 1-D a is a row vector and a 1-D b a column vector, the
// added axis dropped from the result; other leading axes broadcast.
Type numpy_matmul_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<NumpyMatmulAttrs>();
  DataType dtype = nn::product_dtype(args, 0, 1, attrs.out_dtype);
  expect_min_rank(args, 0, 1, "matmul takes no scalars");
  expect_min_rank(args, 1, 1, "matmul takes no scalars");
  const TensorTypeNode* ta = known_rank(args, 0);
  const TensorTypeNode* tb = known_rank(args, 1);
  if (!ta || !tb) return TensorTypeNode::make_unknown_rank(dtype);
  std::vector<Dim> a = *ta->shape, b = *tb->shape;
  bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), Dim(1));
  if (b_vector) b.push_back(Dim(1));
  check_reduction(args, a.back(), "columns", b[b.size() - 2], "rows");
  std::vector<Dim> out = broadcast_batch(args, std::vector<Dim>(a.begin(), a.end() - 2),
                                         std::vector<Dim>(b.begin(), b.end() - 2));
  if (!a_vector) out.push_back(a[a.size() - 2]);
  if (!b_vector) out.push_back(b.back());
  return TensorTypeNode::make(std::move(out), dtype);
}

Type bias_add_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<BiasAddAttrs>();
  relation::expect_same_dtype(args);
  expect_exact_rank(args, 1, 1, "one value per channel");
  const TensorTypeNode* data = known_rank(args, 0);
  if (!data) return args.inputs[0];
  int64_t axis = relation::normalize_axis(a.axis, int64_t(data->shape->size()));
  Dim bias = nn::shape_or_any(args, 1, 1)[0];
  const Dim& channels = (*data->shape)[axis];
  if (nn::provably_different(bias, channels))
    throw_error(args.arg_name(1), " has ", bias.to_string(), " elements but axis ", axis,
                " of 'data' has ", channels.to_string(), ": ", nn::inputs_text(args));
  return args.inputs[0];
}

}  // namespace

void register_nn_dense_ops(OpTable& table) {
  table.add("nn.dense")
      .describe("data (..., K) times the transpose of weight (N, K), giving (..., N)")
      .inputs({"data", "weight"})
      .attrs<DenseAttrs>()
      .type_relation(dense_relation)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.matmul")
      .describe(
          "tensor_a (..., M, K) times a 2-D tensor_b (K, N); transpose_a and transpose_b read "
          "(..., K, M) and (N, K)")
      .inputs({"tensor_a", "tensor_b"})
      .attrs<MatmulAttrs>()
      .type_relation(matmul_relation)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.contrib_dense_pack")
      .describe(
          "data (..., K) times a weight packed in column blocks (N / b, K, b) (weight[n / b, k, "
          "n % b] is element (k, n) of the (K, N) matrix), giving (..., N); the x86 form of "
          "nn.dense")
      .inputs({"data", "weight"})
      .attrs<DenseAttrs>()
      .type_relation(dense_pack_relation)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.batch_matmul")
      .describe(
          "batched product of x (B, M, K) and y (B, N, K) by default; a batch of 1 broadcasts")
      .inputs({"x", "y"})
      .attrs<BatchMatmulAttrs>()
      .type_relation(batch_matmul_relation)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("matmul")
      .describe(
          "numpy matmul (ONNX MatMul): batch dims broadcast, a 1-D operand is a vector whose "
          "added axis is dropped")
      .inputs({"a", "b"})
      .attrs<NumpyMatmulAttrs>()
      .type_relation(numpy_matmul_relation)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.bias_add")
      .describe("adds a 1-D bias along axis of data")
      .inputs({"data", "bias"})
      .attrs<BiasAddAttrs>()
      .type_relation(bias_add_relation)
      .fusion_pattern(OpPattern::Broadcast);
}

}  // namespace anvil::ir
