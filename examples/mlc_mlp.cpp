// The MLC course's MLP as one IRModule mixing both kinds of functions: a PrimFunc written as
// tensor IR text (linear0) called with call_tir, and a function registered at run time
// (env.relu) called with call_dps_packed. The weights are bound as constants, the module is
// built and run by the graph executor, and the result is checked against plain C++.
#include <cmath>
#include <cstdio>
#include <random>

#include "anvil/driver/build.h"
#include "anvil/ir/ir.h"
#include "anvil/ir/printer.h"
#include "anvil/runtime/packed_func.h"
#include "anvil/tir/parser.h"

namespace {

constexpr const char* kLinear0 = R"(@T.prim_func
def linear0(x: T.handle, w: T.handle, b: T.handle, z: T.handle):
    T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
    m, n = T.int64(), T.int64()
    X = T.match_buffer(x, (1, m), "float32")
    W = T.match_buffer(w, (n, m), "float32")
    B = T.match_buffer(b, (n,), "float32")
    Z = T.match_buffer(z, (1, n), "float32")
    Y = T.alloc_buffer((1, n), "float32")
    for i, j, k in T.grid(1, n, m):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
    for i, j in T.grid(1, n):
        with T.block("Z"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = Y[vi, vj] + B[vj]
)";

anvil::Tensor random_tensor(std::vector<int64_t> shape, std::mt19937& rng) {
  anvil::Tensor t = anvil::Tensor::empty(shape, anvil::DataType::float32());
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = dist(rng);
  return t;
}

// relu(x w^T + b), in plain C++.
std::vector<float> layer(const std::vector<float>& x, const anvil::Tensor& w,
                         const anvil::Tensor& b, bool relu) {
  int64_t n = w.shape()[0], m = w.shape()[1];
  std::vector<float> z(n);
  for (int64_t j = 0; j < n; ++j) {
    double acc = b.data_as<float>()[j];
    for (int64_t k = 0; k < m; ++k) acc += double(x[k]) * w.data_as<float>()[j * m + k];
    z[j] = relu ? std::max(float(acc), 0.f) : float(acc);
  }
  return z;
}

}  // namespace

int main() try {
  using namespace anvil;
  // env.relu: a runtime function in destination-passing style (writes its last argument).
  register_global("env.relu", PackedFunc::from_typed([](Tensor x, Tensor out) {
                    for (int64_t i = 0; i < x.numel(); ++i)
                      out.data_as<float>()[i] = std::max(x.data_as<float>()[i], 0.f);
                  }));

  auto tensor_type = [](std::vector<int64_t> shape) {
    return ir::TensorTypeNode::make(std::vector<ir::Dim>(shape.begin(), shape.end()),
                                    DataType::float32());
  };
  // The graph IR text printer shows PrimFuncs through the tensor IR's printer.
  tir::install_graph_ir_hooks();
  ir::IRModule mod;
  mod.add("linear0", tir::parse_prim_func(kLinear0, "linear0.tir"));
  ir::Var x = ir::VarNode::make("x", tensor_type({1, 784}));
  ir::Var w0 = ir::VarNode::make("w0", tensor_type({128, 784}));
  ir::Var b0 = ir::VarNode::make("b0", tensor_type({128}));
  ir::Var w1 = ir::VarNode::make("w1", tensor_type({10, 128}));
  ir::Var b1 = ir::VarNode::make("b1", tensor_type({10}));
  ir::GlobalVar linear0 = ir::GlobalVarNode::make("linear0");
  ir::Expr lv0 = ir::call_tir(linear0, {x, w0, b0}, tensor_type({1, 128}));
  ir::Expr lv1 = ir::call_dps_packed("env.relu", {lv0}, tensor_type({1, 128}));
  ir::Expr out = ir::call_tir(linear0, {lv1, w1, b1}, tensor_type({1, 10}));
  mod.add("main", ir::FunctionNode::make({x, w0, b0, w1, b1}, out));

  std::mt19937 rng(7);
  Tensor input = random_tensor({1, 784}, rng);
  std::vector<std::pair<std::string, Tensor>> params = {{"w0", random_tensor({128, 784}, rng)},
                                                        {"b0", random_tensor({128}, rng)},
                                                        {"w1", random_tensor({10, 128}, rng)},
                                                        {"b1", random_tensor({10}, rng)}};
  std::printf("%s\n", ir::print_module(mod).c_str());

  driver::BuiltModule built = driver::build(mod, params);
  GraphExecutor executor = built.create_executor();
  executor.set_input("x", input);
  executor.run();
  Tensor result = executor.get_output(0);

  std::vector<float> hidden =
      layer(std::vector<float>(input.data_as<float>(), input.data_as<float>() + 784),
            params[0].second, params[1].second, true);
  std::vector<float> expected = layer(hidden, params[2].second, params[3].second, false);
  double max_diff = 0;
  for (int64_t i = 0; i < 10; ++i)
    max_diff =
        std::max(max_diff, double(std::fabs(result.data_as<float>()[i] - expected[size_t(i)])));
  std::printf("max |anvil - plain C++| = %g\n", max_diff);
  return max_diff <= 1e-4 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "mlc_mlp: %s\n", e.what());
  return 1;
}
