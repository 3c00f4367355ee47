// A small helper for writing networks by hand: creates input and parameter
// variables with initialized tensors, and op calls with attrs by field name.
#pragma once

#include <random>

#include "anvil/ir/op.h"
#include "anvil/testing/workloads.h"

namespace anvil::testing {

// How a parameter tensor starts out.
enum class Init { Xavier, Zeros, Ones };

class GraphBuilder {
 public:
  GraphBuilder(DataType dtype, uint64_t seed) : dtype_(dtype), rng_(seed) {}

  // The model input.
  ir::Var input(const std::string& name, const std::vector<int64_t>& shape);
  // A parameter: a variable plus its initial value.
  ir::Var param(const std::string& name, const std::vector<int64_t>& shape, Init init);
  // A call of an op with attrs given by field name.
  ir::Expr op(std::string_view name, std::vector<ir::Expr> args,
              const std::vector<std::pair<std::string, ir::AttrValue>>& attrs = {});

  // @main over the input and every parameter in creation order, typed.
  Workload finish(const ir::Expr& output);

 private:
  DataType dtype_;
  std::mt19937_64 rng_;
  std::vector<ir::Var> vars_;
  std::vector<std::pair<std::string, Tensor>> params_;
};

// Layers shared by the networks, named like TVM's relay.testing.layers.
namespace layers {

// conv2d without bias; the weight is "<name>_weight".
ir::Expr conv2d(GraphBuilder& b, const ir::Expr& data, const std::string& name, int64_t in_channels,
                int64_t channels, std::vector<int64_t> kernel, std::vector<int64_t> strides,
                std::vector<int64_t> padding, int64_t groups = 1);

// batch_norm in inference form: element 0 of nn.batch_norm.
ir::Expr batch_norm_infer(GraphBuilder& b, const ir::Expr& data, const std::string& name,
                          int64_t channels, double epsilon, bool scale = true);

// dense then bias_add; "<name>_weight" and "<name>_bias".
ir::Expr dense_add_bias(GraphBuilder& b, const ir::Expr& data, const std::string& name,
                        int64_t in_features, int64_t units);

}  // namespace layers
}  // namespace anvil::testing
