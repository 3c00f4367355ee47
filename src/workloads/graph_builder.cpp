#include "workloads/graph_builder.h"

#include <cmath>

#include "anvil/ir/infer_type.h"

namespace anvil::testing {

using namespace ir;

int64_t Workload::parameter_count() const {
  int64_t total = 0;
  for (const auto& [name, tensor] : params) total += tensor.numel();
  return total;
}

Var GraphBuilder::input(const std::string& name, const std::vector<int64_t>& shape) {
  Var v = VarNode::make(name, TensorTypeNode::make(to_dims(shape), dtype_));
  vars_.push_back(v);
  return v;
}

Var GraphBuilder::param(const std::string& name, const std::vector<int64_t>& shape, Init init) {
  Var v = input(name, shape);
  Tensor t = Tensor::empty(shape, dtype_);
  if (init == Init::Xavier) {
    // Xavier uniform with the fan averaged over input and output, as TVM's default initializer.
    int64_t receptive = 1;
    for (size_t i = 2; i < shape.size(); ++i) receptive *= shape[i];
    double fan_in = double(shape.size() > 1 ? shape[1] : 1) * double(receptive);
    double fan_out = double(shape[0]) * double(receptive);
    double scale = std::sqrt(3.0 / ((fan_in + fan_out) / 2));
    std::uniform_real_distribution<double> dist(-scale, scale);
    if (dtype_ == DataType::float32()) {
      // The common case writes floats directly: ResNet-152 has 60 M of them.
      float* out = t.data_as<float>();
      for (int64_t i = 0, n = t.numel(); i < n; ++i) out[i] = float(dist(rng_));
    } else {
      for (int64_t i = 0, n = t.numel(); i < n; ++i) t.set_from_double(i, dist(rng_));
    }
  } else {
    t.fill(init == Init::Ones ? 1.0 : 0.0);
  }
  params_.emplace_back(name, t);
  return v;
}

Expr GraphBuilder::op(std::string_view name, std::vector<Expr> args,
                      const std::vector<std::pair<std::string, AttrValue>>& attrs) {
  return call_op(name, std::move(args), make_op_attrs(name, attrs));
}

Workload GraphBuilder::finish(const Expr& output) {
  Workload w;
  w.mod.add("main", FunctionNode::make(vars_, output));
  w.mod = infer_type(w.mod);
  w.params = params_;
  return w;
}

namespace layers {

Expr conv2d(GraphBuilder& b, const Expr& data, const std::string& name, int64_t in_channels,
            int64_t channels, std::vector<int64_t> kernel, std::vector<int64_t> strides,
            std::vector<int64_t> padding, int64_t groups) {
  Var weight = b.param(name + "_weight", {channels, in_channels / groups, kernel[0], kernel[1]},
                       Init::Xavier);
  std::vector<std::pair<std::string, AttrValue>> attrs = {
      {"strides", strides}, {"padding", padding}, {"channels", channels}, {"kernel_size", kernel}};
  if (groups != 1) attrs.push_back({"groups", groups});
  return b.op("nn.conv2d", {data, weight}, attrs);
}

Expr batch_norm_infer(GraphBuilder& b, const Expr& data, const std::string& name, int64_t channels,
                      double epsilon, bool scale) {
  Var gamma = b.param(name + "_gamma", {channels}, Init::Ones);
  Var beta = b.param(name + "_beta", {channels}, Init::Zeros);
  Var mean = b.param(name + "_moving_mean", {channels}, Init::Zeros);
  Var var = b.param(name + "_moving_var", {channels}, Init::Ones);
  std::vector<std::pair<std::string, AttrValue>> attrs = {{"epsilon", epsilon}};
  if (!scale) attrs.push_back({"scale", false});
  Expr bn = b.op("nn.batch_norm", {data, gamma, beta, mean, var}, attrs);
  return TupleGetItemNode::make(bn, 0);
}

Expr dense_add_bias(GraphBuilder& b, const Expr& data, const std::string& name, int64_t in_features,
                    int64_t units) {
  Var weight = b.param(name + "_weight", {units, in_features}, Init::Xavier);
  Var bias = b.param(name + "_bias", {units}, Init::Zeros);
  Expr dense = b.op("nn.dense", {data, weight}, {{"units", units}});
  return b.op("nn.bias_add", {dense, bias}, {{"axis", int64_t(-1)}});
}

}  // namespace layers
}  // namespace anvil::testing
