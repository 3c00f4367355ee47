// Computes of the normalization family: nn.batch_norm (inference, with the moving statistics
// passed through), nn.layer_norm, nn.group_norm, nn.instance_norm, nn.lrn, nn.softmax,
// nn.log_softmax, nn.hardmax, nn.dropout and nn.nll_loss.
// The statistics norms take the mean and the population variance in two passes (two
// reduction blocks: the sum, then the sum of squared deviations from sum / count), which
// keeps float32 close to the reference's double arithmetic.
#include "anvil/ir/attrs/nn_norm.h"

#include <cmath>

#include "anvil/topi/topi.h"
#include "topi/nn_families.h"
#include "topi/nn_util.h"
#include "topi/topi_util.h"

namespace anvil::topi {
namespace {

using tir::PrimExpr;

int64_t wrap_axis(int64_t axis, int ndim) { return axis < 0 ? axis + ndim : axis; }

PrimExpr float_const(DataType dtype, double value) { return tir::make_const(dtype, value); }

// (x - mean) / sqrt(var + epsilon), then times gamma and plus beta when asked.
PrimExpr normalize(PrimExpr x, PrimExpr mean, PrimExpr var, double epsilon, const te::Tensor& gamma,
                   const te::Tensor& beta, const PrimExpr& channel, bool scale, bool center) {
  DataType dtype = x.dtype();
  PrimExpr std_dev = tir::call_intrin(dtype, "sqrt", {var + float_const(dtype, epsilon)});
  PrimExpr v = (x - mean) / std_dev;
  if (scale) v = v * gamma(channel);
  if (center) v = v + beta(channel);
  return v;
}

std::vector<te::Tensor> batch_norm_compute(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::BatchNormAttrs>();
  const te::Tensor& data = args.inputs[0];
  const te::Tensor& gamma = args.inputs[1];
  const te::Tensor& beta = args.inputs[2];
  const te::Tensor& mean = args.inputs[3];
  const te::Tensor& var = args.inputs[4];
  const size_t axis = size_t(wrap_axis(a.axis, data.ndim()));
  const double epsilon = a.epsilon;
  const bool scale = a.scale, center = a.center;
  te::Tensor out = te::compute(
      data.shape(),
      [=](const std::vector<tir::Var>& idx) {
        const PrimExpr c = idx[axis];
        return normalize(data.at(nn::var_exprs(idx)), mean(c), var(c), epsilon, gamma, beta, c,
                         scale, center);
      },
      "T_batch_norm");
  // In inference the statistics outputs are the moving statistics themselves.
  auto copy = [](const te::Tensor& t, const std::string& name) {
    return te::compute(
        t.shape(), [t](const std::vector<tir::Var>& idx) { return t(idx[0]); }, name);
  };
  return {out, copy(mean, "T_batch_norm_mean"), copy(var, "T_batch_norm_var")};
}

// Which elements one statistic covers: the statistics tensor has `stat_shape`; statistic s
// is taken over the points r of `reduce_extents`, element element_of(s, r) of the data; data
// element i belongs to statistic stat_of(i).
struct StatSets {
  std::vector<int64_t> stat_shape, reduce_extents;
  std::function<std::vector<PrimExpr>(const std::vector<PrimExpr>&, const std::vector<PrimExpr>&)>
      element_of;
  std::function<std::vector<PrimExpr>(const std::vector<PrimExpr>&)> stat_of;
  int64_t count() const {
    int64_t n = 1;
    for (int64_t e : reduce_extents) n *= e;
    return n;
  }
};

// Normalizes every set of `sets` by its mean and population variance, then applies gamma and
// beta along `channel_axis`.
te::Tensor normalize_sets(const ComputeArgs& args, const StatSets& sets, size_t channel_axis,
                          double epsilon, bool scale, bool center, const std::string& name) {
  const te::Tensor& data = args.inputs[0];
  const te::Tensor& gamma = args.inputs[1];
  const te::Tensor& beta = args.inputs[2];
  const DataType dtype = data.dtype();
  const PrimExpr count = float_const(dtype, double(sets.count()));
  std::vector<tir::IterVar> r1, r2;
  for (size_t i = 0; i < sets.reduce_extents.size(); ++i) {
    r1.push_back(te::reduce_axis(tir::make_int(sets.reduce_extents[i]), "k" + std::to_string(i)));
    r2.push_back(te::reduce_axis(tir::make_int(sets.reduce_extents[i]), "k" + std::to_string(i)));
  }
  auto point = [](const std::vector<tir::IterVar>& axes) {
    std::vector<PrimExpr> p;
    for (const tir::IterVar& iv : axes) p.push_back(iv.var);
    return p;
  };
  te::Tensor sum = te::compute(
      nn::int_exprs(sets.stat_shape),
      [=](const std::vector<tir::Var>& s) {
        return tir::sum(data.at(sets.element_of(nn::var_exprs(s), point(r1))), r1);
      },
      name + "_sum");
  te::Tensor squares = te::compute(
      nn::int_exprs(sets.stat_shape),
      [=](const std::vector<tir::Var>& s) {
        PrimExpr deviation = data.at(sets.element_of(nn::var_exprs(s), point(r2))) -
                             sum.at(nn::var_exprs(s)) / count;
        return tir::sum(deviation * deviation, r2);
      },
      name + "_sq_sum");
  return te::compute(
      data.shape(),
      [=](const std::vector<tir::Var>& idx) {
        std::vector<PrimExpr> i = nn::var_exprs(idx);
        std::vector<PrimExpr> s = sets.stat_of(i);
        return normalize(data.at(i), sum.at(s) / count, squares.at(s) / count, epsilon, gamma, beta,
                         i[channel_axis], scale, center);
      },
      name);
}

// Layer norm: one statistic per position of every axis but `axis`.
std::vector<te::Tensor> layer_norm_compute(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::LayerNormAttrs>();
  std::vector<int64_t> shape = nn::static_shape(args.inputs[0]);
  const size_t axis = size_t(wrap_axis(a.axis, int(shape.size())));
  StatSets sets;
  sets.stat_shape = shape;
  sets.stat_shape.erase(sets.stat_shape.begin() + std::ptrdiff_t(axis));
  sets.reduce_extents = {shape[axis]};
  sets.element_of = [axis](const std::vector<PrimExpr>& s, const std::vector<PrimExpr>& r) {
    std::vector<PrimExpr> i = s;
    i.insert(i.begin() + std::ptrdiff_t(axis), r[0]);
    return i;
  };
  sets.stat_of = [axis](const std::vector<PrimExpr>& i) {
    std::vector<PrimExpr> s = i;
    s.erase(s.begin() + std::ptrdiff_t(axis));
    return s;
  };
  return {normalize_sets(args, sets, axis, a.epsilon, a.scale, a.center, "T_layer_norm")};
}

// Group norm: one statistic per (leading index, group) over the group's channels and every
// axis after `axis`.
std::vector<te::Tensor> group_norm_compute(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::GroupNormAttrs>();
  std::vector<int64_t> shape = nn::static_shape(args.inputs[0]);
  const size_t axis = size_t(wrap_axis(a.axis, int(shape.size())));
  const int64_t groups = a.num_groups;
  const int64_t per_group = shape[axis] / groups;
  StatSets sets;
  sets.stat_shape.assign(shape.begin(), shape.begin() + std::ptrdiff_t(axis));
  sets.stat_shape.push_back(groups);
  sets.reduce_extents = {per_group};
  sets.reduce_extents.insert(sets.reduce_extents.end(), shape.begin() + std::ptrdiff_t(axis) + 1,
                             shape.end());
  sets.element_of = [axis, per_group](const std::vector<PrimExpr>& s,
                                      const std::vector<PrimExpr>& r) {
    std::vector<PrimExpr> i(s.begin(), s.begin() + std::ptrdiff_t(axis));
    i.push_back(s[axis] * per_group + r[0]);
    i.insert(i.end(), r.begin() + 1, r.end());
    return i;
  };
  sets.stat_of = [axis, per_group](const std::vector<PrimExpr>& i) {
    std::vector<PrimExpr> s(i.begin(), i.begin() + std::ptrdiff_t(axis));
    s.push_back(i[axis] / per_group);
    return s;
  };
  return {normalize_sets(args, sets, axis, a.epsilon, a.scale, a.center, "T_group_norm")};
}

// Instance norm: one statistic per (batch, channel) over every other axis.
std::vector<te::Tensor> instance_norm_compute(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::InstanceNormAttrs>();
  std::vector<int64_t> shape = nn::static_shape(args.inputs[0]);
  const size_t axis = size_t(wrap_axis(a.axis, int(shape.size())));
  std::vector<size_t> kept = {0}, reduced;
  if (axis != 0) kept.push_back(axis);
  StatSets sets;
  for (size_t d = 0; d < shape.size(); ++d) {
    bool keep = d == 0 || d == axis;
    (keep ? sets.stat_shape : sets.reduce_extents).push_back(shape[d]);
    if (!keep) reduced.push_back(d);
  }
  const size_t rank = shape.size();
  sets.element_of = [=](const std::vector<PrimExpr>& s, const std::vector<PrimExpr>& r) {
    std::vector<PrimExpr> i(rank);
    for (size_t k = 0; k < kept.size(); ++k) i[kept[k]] = s[k];
    for (size_t k = 0; k < reduced.size(); ++k) i[reduced[k]] = r[k];
    return i;
  };
  sets.stat_of = [=](const std::vector<PrimExpr>& i) {
    std::vector<PrimExpr> s;
    for (size_t d : kept) s.push_back(i[d]);
    return s;
  };
  return {normalize_sets(args, sets, axis, a.epsilon, a.scale, a.center, "T_instance_norm")};
}

// Local response norm over `size` channels of `axis` (ONNX's window: floor((size - 1) / 2)
// before, the rest after, clipped to the tensor): the data padded with zeros along the axis,
// the sum of squares over the window, then data / (bias + alpha / size * sum)^beta.
std::vector<te::Tensor> lrn_compute(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::LRNAttrs>();
  const te::Tensor& data = args.inputs[0];
  const DataType dtype = data.dtype();
  std::vector<int64_t> shape = nn::static_shape(data);
  const size_t axis = size_t(wrap_axis(a.axis, int(shape.size())));
  const int64_t before = (a.size - 1) / 2, after = a.size - 1 - before;
  const int64_t channels = shape[axis];
  std::vector<int64_t> padded_shape = shape;
  padded_shape[axis] += before + after;
  te::Tensor padded = te::compute(
      nn::int_exprs(padded_shape),
      [=](const std::vector<tir::Var>& idx) {
        std::vector<PrimExpr> read = nn::var_exprs(idx);
        read[axis] = idx[axis] - before;
        PrimExpr inside = tir::logical_and(idx[axis] >= before, idx[axis] < before + channels);
        return nn::if_then_else(inside, data.at(read), float_const(dtype, 0));
      },
      "pad_data");
  tir::IterVar k = te::reduce_axis(tir::make_int(a.size), "rk");
  te::Tensor square_sum = te::compute(
      data.shape(),
      [=](const std::vector<tir::Var>& idx) {
        std::vector<PrimExpr> read = nn::var_exprs(idx);
        read[axis] = idx[axis] + k.var;
        PrimExpr x = padded.at(read);
        return tir::sum(x * x, {k});
      },
      "T_lrn_sqr_sum");
  const double bias = a.bias, alpha_per_size = a.alpha / double(a.size), beta = a.beta;
  return {te::compute(
      data.shape(),
      [=](const std::vector<tir::Var>& idx) {
        std::vector<PrimExpr> i = nn::var_exprs(idx);
        PrimExpr base =
            float_const(dtype, bias) + float_const(dtype, alpha_per_size) * square_sum.at(i);
        return data.at(i) / tir::call_intrin(dtype, "pow", {base, float_const(dtype, beta)});
      },
      "T_lrn")};
}

// Inference: the data passes through and every element is kept (a mask of ones).
std::vector<te::Tensor> dropout_compute(const ComputeArgs& args) {
  const te::Tensor& data = args.inputs[0];
  te::Tensor out = te::compute(
      data.shape(),
      [data](const std::vector<tir::Var>& idx) { return data.at(nn::var_exprs(idx)); },
      "T_dropout");
  const DataType mask_dtype = args.out_dtype(1);
  te::Tensor mask = te::compute(
      data.shape(),
      [mask_dtype](const std::vector<tir::Var>&) { return float_const(mask_dtype, 1); },
      "T_dropout_mask");
  return {out, mask};
}

// nn.nll_loss: loss[n, d...] = -predictions[n, target, d...] * weights[target], 0 where the
// target is ignore_index; "sum" adds the losses, "mean" divides that by the weights taken.
// A target outside the classes (which the reference rejects) is clamped to stay in bounds.
std::vector<te::Tensor> nll_loss_compute(const ComputeArgs& args) {
  const auto& a = args.attrs_as<ir::NLLLossAttrs>();
  const te::Tensor& predictions = args.inputs[0];
  const te::Tensor& targets = args.inputs[1];
  const te::Tensor& weights = args.inputs[2];
  const DataType dtype = predictions.dtype();
  const int64_t classes = nn::static_shape(predictions)[1];
  const std::optional<int64_t> ignore = a.ignore_index;
  // The class of target element t, and whether it counts.
  auto class_of = [=](const std::vector<PrimExpr>& t) {
    return tir::min(tir::max(tir::cast(tir::kIndexType, targets.at(t)), 0), classes - 1);
  };
  auto counts = [=](const std::vector<PrimExpr>& t) -> PrimExpr {
    if (!ignore) return nullptr;
    return tir::ne(targets.at(t), tir::make_const(targets.dtype(), double(*ignore)));
  };
  auto weight_of = [=](const std::vector<PrimExpr>& t) {
    PrimExpr w = weights(class_of(t));
    PrimExpr taken = counts(t);
    return taken ? tir::select(taken, w, float_const(dtype, 0)) : w;
  };
  auto loss_of = [=](const std::vector<PrimExpr>& t) {
    std::vector<PrimExpr> p = t;
    p.insert(p.begin() + 1, class_of(t));
    return -predictions.at(p) * weight_of(t);
  };
  if (a.reduction == "none") {
    return {te::compute(
        targets.shape(),
        [=](const std::vector<tir::Var>& idx) { return loss_of(nn::var_exprs(idx)); },
        "T_nll_loss")};
  }
  auto reduce_all = [&](std::function<PrimExpr(const std::vector<PrimExpr>&)> term,
                        const std::string& name) {
    std::vector<tir::IterVar> axes;
    std::vector<PrimExpr> point;
    for (size_t d = 0; d < targets.shape().size(); ++d) {
      axes.push_back(te::reduce_axis(targets.shape()[d], "k" + std::to_string(d)));
      point.push_back(axes.back().var);
    }
    return te::compute(
        {}, [=](const std::vector<tir::Var>&) { return tir::sum(term(point), axes); }, name);
  };
  te::Tensor total = reduce_all(loss_of, "T_nll_loss_sum");
  if (a.reduction == "sum") return {total};
  te::Tensor total_weight = reduce_all(weight_of, "T_nll_loss_weight");
  return {te::compute(
      {}, [=](const std::vector<tir::Var>&) { return total() / total_weight(); }, "T_nll_loss")};
}

// ---------------------------------------------------------------- softmax
// nn.softmax, nn.log_softmax and nn.hardmax along one axis: a max pass, a sum of shifted
// exponentials (or the first position of the max), then the elementwise result.

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
        // One reciprocal per row, hoisted out of the row's loop, and a multiply per element:
        // a vector divide takes ten or more times a multiply's throughput.
        PrimExpr result =
            kind == SoftmaxKind::Softmax
                ? tir::call_intrin(acc, "exp", {s}) * (tir::make_const(acc, 1.0) / sum.at(outer))
                : s - tir::call_intrin(acc, "log", {sum.at(outer)});
        return tir::cast(dtype, result);
      },
      name)};
}

}  // namespace

void register_nn_norm_computes() {
  register_compute("nn.nll_loss", nll_loss_compute);
  register_compute("nn.batch_norm", batch_norm_compute);
  register_compute("nn.layer_norm", layer_norm_compute);
  register_compute("nn.group_norm", group_norm_compute);
  register_compute("nn.instance_norm", instance_norm_compute);
  register_compute("nn.lrn", lrn_compute);
  register_compute("nn.softmax", [](const ComputeArgs& args) {
    return softmax_compute(args, SoftmaxKind::Softmax);
  });
  register_compute("nn.log_softmax", [](const ComputeArgs& args) {
    return softmax_compute(args, SoftmaxKind::LogSoftmax);
  });
  register_compute("nn.hardmax", [](const ComputeArgs& args) {
    return softmax_compute(args, SoftmaxKind::Hardmax);
  });
  register_compute("nn.dropout", dropout_compute);
}

}  // namespace anvil::topi
