// Computes of nn.softmax, nn.log_softmax and nn.hardmax along one axis: a max pass, a sum of
// shifted exponentials (or the first position of the max), then the elementwise result.
#include <string>

#include "anvil/ir/attrs/nn_norm.h"
#include "anvil/topi/topi.h"
#include "topi/topi_util.h"

namespace anvil::topi {
namespace {

enum class SoftmaxKind { Softmax, LogSoftmax, Hardmax };

// index without its entry at axis: the position of the reduced value for an element.
std::vector<PrimExpr> drop_axis(const std::vector<Var>& index, size_t axis) {
  std::vector<PrimExpr> result;
  for (size_t d = 0; d < index.size(); ++d)
    if (d != axis) result.push_back(index[d]);
  return result;
}

std::vector<te::Tensor> softmax_compute(const ComputeArgs& args, SoftmaxKind kind) {
  const te::Tensor& x = args.inputs[0];
  int64_t axis_attr = args.attrs_as<ir::SoftmaxAttrs>().axis;
  size_t axis = size_t(normalize_axis(axis_attr, x.ndim(), args.op_name()));
  std::vector<bool> reduced(size_t(x.ndim()), false);
  reduced[axis] = true;
  std::string name = tensor_name(args.op_name());
  DataType dtype = x.dtype();
  DataType acc = dtype.bits == 16 ? DataType::float32() : dtype;

  te::Tensor top = reduce_compute(
      x.shape(), reduced, false, name + "_max",
      [&](const ReductionPoint& p) { return tir::max_reduce(x.at(p.data_index), p.axes); });
  auto element = [&](const std::vector<Var>& i) {
    return x.at(std::vector<PrimExpr>(i.begin(), i.end()));
  };

  if (kind == SoftmaxKind::Hardmax) {
    // The first position holding the max (NaN-free data; the reference's strict > scan).
    int64_t length = static_extent(x.shape()[axis]);
    te::Tensor first =
        reduce_compute(x.shape(), reduced, false, name + "_first", [&](const ReductionPoint& p) {
          PrimExpr hit = tir::eq(x.at(p.data_index), top.at(p.out_index));
          return tir::min_reduce(tir::select(hit, p.reduced_position, tir::make_int(length)),
                                 p.axes);
        });
    return {te::compute(
        x.shape(),
        [&](const std::vector<Var>& i) {
          PrimExpr is_first = tir::eq(PrimExpr(i[axis]), first.at(drop_axis(i, axis)));
          return tir::select(is_first, tir::make_const(dtype, 1), tir::make_const(dtype, 0));
        },
        name)};
  }

  auto shifted = [&](PrimExpr value, const std::vector<PrimExpr>& top_index) {
    return tir::cast(acc, value) - tir::cast(acc, top.at(top_index));
  };
  te::Tensor sum =
      reduce_compute(x.shape(), reduced, false, name + "_sum", [&](const ReductionPoint& p) {
        PrimExpr s = shifted(x.at(p.data_index), p.out_index);
        return tir::sum(tir::call_intrin(acc, "exp", {s}), p.axes);
      });
  return {te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> outer = drop_axis(i, axis);
        PrimExpr s = shifted(element(i), outer);
        PrimExpr result = kind == SoftmaxKind::Softmax
                              ? tir::call_intrin(acc, "exp", {s}) / sum.at(outer)
                              : s - tir::call_intrin(acc, "log", {sum.at(outer)});
        return tir::cast(dtype, result);
      },
      name)};
}

}  // namespace

void register_softmax_computes() {
  register_compute("nn.softmax", [](const ComputeArgs& args) {
    return softmax_compute(args, SoftmaxKind::Softmax);
  });
  register_compute("nn.log_softmax", [](const ComputeArgs& args) {
    return softmax_compute(args, SoftmaxKind::LogSoftmax);
  });
  register_compute("nn.hardmax", [](const ComputeArgs& args) {
    return softmax_compute(args, SoftmaxKind::Hardmax);
  });
}

}  // namespace anvil::topi
