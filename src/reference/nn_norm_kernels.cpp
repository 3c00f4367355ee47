// Reference kernels of the normalization family: batch/layer/group/instance
// norm, local response norm, softmax, log_softmax, hardmax, dropout (as in
// inference) and nll_loss. Statistics are taken in double with the population
// variance (divide by N), as the ONNX operators define them.
#include <cmath>
#include <limits>

#include "anvil/ir/attrs/nn_norm.h"
#include "anvil/support/error.h"
#include "reference/kernel_families.h"
#include "reference/kernel_util.h"

namespace anvil::reference {
namespace {

using namespace ir;

// A shape seen as (outer, length, inner) around one axis: element (o, k, i)
// sits at flat index (o * length + k) * inner + i.
struct AxisSplit {
  int64_t outer = 1, length = 1, inner = 1;

  AxisSplit(std::span<const int64_t> shape, int64_t axis) {
    for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
      if (d < axis) outer *= shape[size_t(d)];
      if (d == axis) length = shape[size_t(d)];
      if (d > axis) inner *= shape[size_t(d)];
    }
  }
  size_t at(int64_t o, int64_t k, int64_t i) const { return size_t((o * length + k) * inner + i); }
};

int64_t checked_axis(int64_t axis, const Tensor& data) {
  int64_t a = wrap_axis(axis, data.ndim());
  if (a < 0 || a >= data.ndim())
    throw_error("axis ", axis, " is out of range for rank ", data.ndim());
  return a;
}

// Mean and population variance of the values at the given flat indices.
struct Moments {
  double mean = 0, variance = 0;
};
Moments moments(const std::vector<double>& x, const std::vector<size_t>& where) {
  Moments m;
  for (size_t i : where) m.mean += x[i];
  m.mean /= double(where.size());
  for (size_t i : where) m.variance += (x[i] - m.mean) * (x[i] - m.mean);
  m.variance /= double(where.size());
  return m;
}

// ---------------------------------------------------------------- batch_norm

std::vector<Tensor> batch_norm(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<BatchNormAttrs>();
  const Tensor& data = args.inputs[0];
  AxisSplit split(data.shape(), checked_axis(attrs.axis, data));
  std::vector<double> x = to_doubles(data);
  std::vector<double> gamma = to_doubles(args.inputs[1]), beta = to_doubles(args.inputs[2]);
  std::vector<double> mean = to_doubles(args.inputs[3]), var = to_doubles(args.inputs[4]);
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < split.outer; ++o)
    for (int64_t c = 0; c < split.length; ++c)
      for (int64_t i = 0; i < split.inner; ++i) {
        size_t at = split.at(o, c, i);
        double v = (x[at] - mean[size_t(c)]) / std::sqrt(var[size_t(c)] + attrs.epsilon);
        if (attrs.scale) v *= gamma[size_t(c)];
        if (attrs.center) v += beta[size_t(c)];
        y[at] = v;
      }
  // In inference the statistics fields are the moving statistics themselves.
  return {from_doubles(y, data.shape_vector(), args.out_dtype(0)), args.inputs[3].copy(),
          args.inputs[4].copy()};
}

// ---------------------------------------------------------------- layer, group, instance norm

// Normalizes x over each set of flat indices, then applies gamma and beta by
// channel (channel_of maps a flat index to its channel).
template <typename ChannelOf>
std::vector<double> normalize_sets(const std::vector<double>& x,
                                   const std::vector<std::vector<size_t>>& sets, double epsilon,
                                   const KernelArgs& args, bool scale, bool center,
                                   ChannelOf channel_of) {
  std::vector<double> gamma = to_doubles(args.inputs[1]), beta = to_doubles(args.inputs[2]);
  std::vector<double> y(x.size());
  for (const std::vector<size_t>& set : sets) {
    if (set.empty()) continue;
    Moments m = moments(x, set);
    double inv_std = 1.0 / std::sqrt(m.variance + epsilon);
    for (size_t i : set) {
      double v = (x[i] - m.mean) * inv_std;
      size_t c = channel_of(i);
      if (scale) v *= gamma[c];
      if (center) v += beta[c];
      y[i] = v;
    }
  }
  return y;
}

std::vector<Tensor> layer_norm(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<LayerNormAttrs>();
  const Tensor& data = args.inputs[0];
  AxisSplit split(data.shape(), checked_axis(attrs.axis, data));
  std::vector<std::vector<size_t>> sets;
  for (int64_t o = 0; o < split.outer; ++o)
    for (int64_t i = 0; i < split.inner; ++i) {
      std::vector<size_t>& set = sets.emplace_back();
      for (int64_t k = 0; k < split.length; ++k) set.push_back(split.at(o, k, i));
    }
  auto channel_of = [&](size_t flat) {
    return size_t((int64_t(flat) / split.inner) % split.length);
  };
  std::vector<double> y = normalize_sets(to_doubles(data), sets, attrs.epsilon, args, attrs.scale,
                                         attrs.center, channel_of);
  return {from_doubles(y, data.shape_vector(), args.out_dtype())};
}

std::vector<Tensor> group_norm(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<GroupNormAttrs>();
  const Tensor& data = args.inputs[0];
  AxisSplit split(data.shape(), checked_axis(attrs.axis, data));
  if (attrs.num_groups <= 0 || split.length % attrs.num_groups != 0)
    throw_error("group_norm: ", split.length, " channels do not split into ", attrs.num_groups,
                " groups");
  int64_t per_group = split.length / attrs.num_groups;
  std::vector<std::vector<size_t>> sets;
  for (int64_t o = 0; o < split.outer; ++o)
    for (int64_t g = 0; g < attrs.num_groups; ++g) {
      std::vector<size_t>& set = sets.emplace_back();
      for (int64_t k = g * per_group; k < (g + 1) * per_group; ++k)
        for (int64_t i = 0; i < split.inner; ++i) set.push_back(split.at(o, k, i));
    }
  auto channel_of = [&](size_t flat) {
    return size_t((int64_t(flat) / split.inner) % split.length);
  };
  std::vector<double> y = normalize_sets(to_doubles(data), sets, attrs.epsilon, args, attrs.scale,
                                         attrs.center, channel_of);
  return {from_doubles(y, data.shape_vector(), args.out_dtype())};
}

// Statistics over every axis but the batch axis (0) and the channel axis.
std::vector<Tensor> instance_norm(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<InstanceNormAttrs>();
  const Tensor& data = args.inputs[0];
  int64_t axis = checked_axis(attrs.axis, data);
  std::span<const int64_t> shape = data.shape();
  int64_t channels = shape[size_t(axis)];
  std::vector<std::vector<size_t>> sets(size_t(shape[0] * channels));
  std::vector<size_t> channel(size_t(data.numel()));
  for (int64_t flat = 0; flat < data.numel(); ++flat) {
    std::vector<int64_t> index = unravel(flat, shape);
    channel[size_t(flat)] = size_t(index[size_t(axis)]);
    sets[size_t(index[0] * channels + index[size_t(axis)])].push_back(size_t(flat));
  }
  auto channel_of = [&](size_t flat) { return channel[flat]; };
  std::vector<double> y = normalize_sets(to_doubles(data), sets, attrs.epsilon, args, attrs.scale,
                                         attrs.center, channel_of);
  return {from_doubles(y, data.shape_vector(), args.out_dtype())};
}

// ---------------------------------------------------------------- lrn

// ONNX's window: channels c - floor((size-1)/2) .. c + ceil((size-1)/2),
// clipped to the tensor; the sum of squares is scaled by alpha / size.
std::vector<Tensor> lrn(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<LRNAttrs>();
  const Tensor& data = args.inputs[0];
  AxisSplit split(data.shape(), checked_axis(attrs.axis, data));
  int64_t before = (attrs.size - 1) / 2;
  int64_t after = attrs.size - 1 - before;
  std::vector<double> x = to_doubles(data);
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < split.outer; ++o)
    for (int64_t c = 0; c < split.length; ++c)
      for (int64_t i = 0; i < split.inner; ++i) {
        double square_sum = 0;
        for (int64_t k = std::max<int64_t>(0, c - before);
             k <= std::min(split.length - 1, c + after); ++k)
          square_sum += x[split.at(o, k, i)] * x[split.at(o, k, i)];
        double denominator =
            std::pow(attrs.bias + attrs.alpha / double(attrs.size) * square_sum, attrs.beta);
        y[split.at(o, c, i)] = x[split.at(o, c, i)] / denominator;
      }
  return {from_doubles(y, data.shape_vector(), args.out_dtype())};
}

// ---------------------------------------------------------------- softmax family

enum class SoftmaxKind { Softmax, LogSoftmax, Hardmax };

// Along the axis: exp(x - max) / sum, its log, or a one-hot of the first maximum.
ReferenceKernel softmax_kernel(SoftmaxKind kind) {
  return [kind](const KernelArgs& args) -> std::vector<Tensor> {
    const auto& attrs = args.attrs_as<SoftmaxAttrs>();
    const Tensor& data = args.inputs[0];
    AxisSplit split(data.shape(), checked_axis(attrs.axis, data));
    std::vector<double> x = to_doubles(data);
    std::vector<double> y(x.size());
    for (int64_t o = 0; o < split.outer; ++o)
      for (int64_t i = 0; i < split.inner; ++i) {
        if (split.length == 0) continue;
        int64_t argmax = 0;
        for (int64_t k = 1; k < split.length; ++k)
          if (x[split.at(o, k, i)] > x[split.at(o, argmax, i)]) argmax = k;
        double top = x[split.at(o, argmax, i)];
        if (kind == SoftmaxKind::Hardmax) {
          for (int64_t k = 0; k < split.length; ++k) y[split.at(o, k, i)] = k == argmax ? 1 : 0;
          continue;
        }
        double sum = 0;
        for (int64_t k = 0; k < split.length; ++k) sum += std::exp(x[split.at(o, k, i)] - top);
        for (int64_t k = 0; k < split.length; ++k) {
          double shifted = x[split.at(o, k, i)] - top;
          y[split.at(o, k, i)] =
              kind == SoftmaxKind::Softmax ? std::exp(shifted) / sum : shifted - std::log(sum);
        }
      }
    return {from_doubles(y, data.shape_vector(), args.out_dtype())};
  };
}

// ---------------------------------------------------------------- dropout

// Inference: the data passes unchanged and every element is kept (mask of ones).
std::vector<Tensor> dropout(const KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  Tensor mask = Tensor::empty(data.shape_vector(), args.out_dtype(1));
  mask.fill(1);
  return {data.copy(), mask};
}

// ---------------------------------------------------------------- nll_loss

std::vector<Tensor> nll_loss(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<NLLLossAttrs>();
  const Tensor& predictions = args.inputs[0];
  const Tensor& targets = args.inputs[1];
  std::vector<double> p = to_doubles(predictions);
  std::vector<int64_t> t = to_int64s(targets);
  std::vector<double> w = to_doubles(args.inputs[2]);
  int64_t batch = predictions.shape()[0], classes = predictions.shape()[1];
  // The trailing dims (d1, d2, ...) taken as one.
  int64_t inner = batch * classes == 0 ? 0 : predictions.numel() / (batch * classes);
  std::vector<double> loss(t.size()), weight(t.size());
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t d = 0; d < inner; ++d) {
      size_t j = size_t(n * inner + d);
      int64_t target = t[j];
      if (attrs.ignore_index && target == *attrs.ignore_index) continue;  // loss and weight 0
      if (target < 0 || target >= classes)
        throw_error("nll_loss: target ", target, " at element ", j, " is not a class in [0, ",
                    classes, ")");
      weight[j] = w[size_t(target)];
      loss[j] = -p[size_t((n * classes + target) * inner + d)] * weight[j];
    }
  if (attrs.reduction == "none")
    return {from_doubles(loss, targets.shape_vector(), args.out_dtype())};
  double total = 0, total_weight = 0;
  for (size_t j = 0; j < loss.size(); ++j) {
    total += loss[j];
    total_weight += weight[j];
  }
  // The weighted mean divides by the weights of the targets taken, as ONNX defines it.
  double value = attrs.reduction == "sum" ? total : total / total_weight;
  return {from_doubles({value}, {}, args.out_dtype())};
}

}  // namespace

void register_nn_norm_kernels() {
  register_kernel("nn.batch_norm", batch_norm);
  register_kernel("nn.layer_norm", layer_norm);
  register_kernel("nn.group_norm", group_norm);
  register_kernel("nn.instance_norm", instance_norm);
  register_kernel("nn.lrn", lrn);
  register_kernel("nn.softmax", softmax_kernel(SoftmaxKind::Softmax));
  register_kernel("nn.log_softmax", softmax_kernel(SoftmaxKind::LogSoftmax));
  register_kernel("nn.hardmax", softmax_kernel(SoftmaxKind::Hardmax));
  register_kernel("nn.dropout", dropout);
  register_kernel("nn.nll_loss", nll_loss);
}

}  // namespace anvil::reference
