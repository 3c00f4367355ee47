// The layout strategy of nn.dense and nn.matmul with a constant 2-D weight on x86: the product
// becomes nn.contrib_dense_pack against the weight packed in blocks of output columns,
// (N / b, K, b), so that one column tile of the schedule (dense.cpp) reads one contiguous panel
// (a row of the plain (K, N) weight is N floats apart from the next, which for N = 768 or 3072
// maps a whole panel onto a few cache sets). A width that takes no block of four lanes or more
// falls back to a matmul against the transposed weight.
#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/builder.h"
#include "anvil/ir/op.h"
#include "topi/x86/x86_util.h"

namespace anvil::topi::x86 {
namespace {

// The output-column block of a packed weight (the column tile of the x86 schedule): up to
// four whole vectors, or up to eight half vectors; 0 when N takes neither.
int64_t column_block(int64_t columns, int lanes) {
  // Half vectors when no full one divides N (1000 classes = 125 x 8): the weight of a
  // classifier is read once per run, and packed it is read as one stream per column tile
  // instead of 40 floats out of every 4000-byte row.
  for (int64_t width = lanes, most = 4; width >= 4 && width >= lanes / 2; width /= 2, most *= 2) {
    if (columns % width != 0) continue;
    int64_t vectors = 1;
    for (int64_t v = most; v > 1; --v)
      if ((columns / width) % v == 0) {
        vectors = v;
        break;
      }
    return vectors * width;
  }
  return 0;
}

// The (K, N) matrix `weight` (or, with `rows_are_columns`, the (N, K) weight of nn.dense) in
// blocks of b output columns: packed[n / b, k, n % b] = element (k, n).
Tensor pack_columns(const Tensor& weight, bool rows_are_columns, int64_t block) {
  std::vector<int64_t> s = weight.shape_vector();
  const int64_t k_size = rows_are_columns ? s[1] : s[0], n_size = rows_are_columns ? s[0] : s[1];
  Tensor packed = Tensor::empty({n_size / block, k_size, block}, weight.dtype());
  const float* src = static_cast<const float*>(weight.data());
  float* dst = static_cast<float*>(packed.data());
  for (int64_t k = 0; k < k_size; ++k)
    for (int64_t n = 0; n < n_size; ++n)
      dst[(n / block) * k_size * block + k * block + n % block] =
          rows_are_columns ? src[n * k_size + k] : src[k * n_size + n];
  return packed;
}

std::string check_dense(const ir::CallNode& call, const ir::Type&, int) {
  if (call.args.size() != 2) return "not a two-operand product";
  const auto* w = ir::as<ir::TensorTypeNode>(call.args[1]->checked_type);
  if (!w || !w->shape || w->shape->size() != 2 || !ir::is_float32(call.args[1]->checked_type) ||
      !ir::is_float32(call.args[0]->checked_type))
    return "data and weight must be float32, the weight 2-D";
  if (!(*w->shape)[0].is_static() || !(*w->shape)[1].is_static())
    return "the weight's shape is not static";
  if (call.op()->name == "nn.matmul") {
    const auto* a = dynamic_cast<const ir::MatmulAttrs*>(call.attrs.get());
    if (a && (a->transpose_a || a->transpose_b)) return "transposed operands are not packed";
  }
  return "";
}

LayoutRewrite rewrite_dense(const LayoutArgs& args) {
  const auto* constant = ir::as<ir::ConstantNode>(args.arg(1));
  if (!constant) throw_error("the weight is not a constant (bind the params to pack it)");
  const Tensor& w = constant->data;
  const bool is_dense = args.call.op()->name == "nn.dense";
  auto attrs = ir::make_attrs<ir::DenseAttrs>();
  if (is_dense) {
    const auto& a = args.call.attrs_as<ir::DenseAttrs>();
    attrs->units = a.units;
    attrs->out_dtype = a.out_dtype;
  } else if (args.call.attrs) {
    const auto& a = args.call.attrs_as<ir::MatmulAttrs>();
    attrs->units = a.units;
    attrs->out_dtype = a.out_dtype;
  }
  const int64_t columns = w.shape_vector()[is_dense ? 0 : 1];
  if (int64_t block = column_block(columns, args.vector_lanes)) {
    ir::Expr packed = ir::ConstantNode::make(pack_columns(w, is_dense, block));
    return LayoutRewrite{
        ir::call_op("nn.contrib_dense_pack", {args.arg(0), packed}, ir::Attrs(attrs))};
  }
  if (!is_dense)
    throw_error(columns, " columns take no block of 4 lanes or more: the weight stays as it is");
  auto matmul_attrs = ir::make_attrs<ir::MatmulAttrs>();
  matmul_attrs->units = attrs->units;
  matmul_attrs->out_dtype = attrs->out_dtype;
  // One block of all N columns is the (K, N) transpose.
  const int64_t depth = w.shape_vector()[1];
  ir::Expr transposed =
      ir::ConstantNode::make(pack_columns(w, true, columns).view({depth, columns}));
  return LayoutRewrite{
      ir::call_op("nn.matmul", {args.arg(0), transposed}, ir::Attrs(matmul_attrs))};
}

}  // namespace

void register_dense_layout() {
  for (const char* op : {"nn.dense", "nn.matmul"})
    register_layout(op, LayoutStrategy{"x86.dense_pack", check_dense, rewrite_dense});
}

}  // namespace anvil::topi::x86
