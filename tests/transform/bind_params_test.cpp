// BindParams: named parameters of @main become constants.
#include "anvil/testing/workloads.h"
#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::parse;
using testing::print;

Tensor filled(std::vector<int64_t> shape, std::vector<double> values,
              DataType dtype = DataType::float32()) {
  Tensor t = Tensor::empty(std::move(shape), dtype);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_from_double(i, values[size_t(i)]);
  return t;
}

const char* kDense = R"(
def @main(%x: Tensor[(1, 2), float32], %w: Tensor[(2, 2), float32], %b: Tensor[(2), float32]) {
  %0 = nn.dense(%x, %w);
  nn.bias_add(%0, %b, axis=-1)
}
)";

TEST(BindParams, NamedParametersBecomeConstants) {
  ir::IRModule mod = parse(kDense);
  ir::IRModule bound = bind_params(mod, {{"w", filled({2, 2}, {1, 2, 3, 4})},
                                         {"b", filled({2}, {0.5, -0.5})},
                                         {"other", filled({1}, {7})}});
  EXPECT_EQ(print(bound), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2), float32]) -> Tensor[(1, 2), float32] {
  %0 = nn.dense(%x, const([1, 2, 3, 4], shape=(2, 2), dtype=float32));
  nn.bias_add(%0, const([0.5, -0.5], shape=(2), dtype=float32), axis=-1)
}
)");
  Tensor x = filled({1, 2}, {1, 1});
  std::vector<Tensor> out = reference::Interpreter(bound).run({x});
  // [1, 1] . rows [1, 2] and [3, 4], plus the bias.
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].get_as_double(0), 3.5);
  EXPECT_EQ(out[0].get_as_double(1), 6.5);
}

// The result is typed again: every step carries its type.
TEST(BindParams, ResultIsTyped) {
  ir::IRModule bound = bind_params(parse(kDense), {{"w", filled({2, 2}, {1, 2, 3, 4})}});
  EXPECT_EQ(ir::print_module(bound), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2), float32], %b: Tensor[(2), float32]) -> Tensor[(1, 2), float32] {
  %0 = nn.dense(%x, const([1, 2, 3, 4], shape=(2, 2), dtype=float32)) /* ty=Tensor[(1, 2), float32] */;
  nn.bias_add(%0, %b, axis=-1) /* ty=Tensor[(1, 2), float32] */
}
)");
}

TEST(BindParams, UnnamedParametersStay) {
  ir::IRModule mod = parse(kDense);
  ir::IRModule bound = bind_params(mod, {{"b", filled({2}, {1, 2})}});
  EXPECT_EQ(print(bound), R"(#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2), float32], %w: Tensor[(2, 2), float32]) -> Tensor[(1, 2), float32] {
  %0 = nn.dense(%x, %w);
  nn.bias_add(%0, const([1, 2], shape=(2), dtype=float32), axis=-1)
}
)");
}

TEST(BindParams, WrongShapeOrDtypeNamesTheParameter) {
  ir::IRModule mod = parse(kDense);
  try {
    bind_params(mod, {{"w", filled({2, 3}, {1, 2, 3, 4, 5, 6})}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "bind_params: parameter 'w' has type Tensor[(2, 2), float32] but the bound "
                 "tensor is Tensor[(2, 3), float32]");
  }
  try {
    bind_params(mod, {{"b", filled({2}, {1, 2}, DataType::float16())}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "bind_params: parameter 'b' has type Tensor[(2), float32] but the bound "
                 "tensor is Tensor[(2), float16]");
  }
}

TEST(BindParams, WorkloadWithAllParamsBoundRunsTheSame) {
  anvil::testing::Workload w = anvil::testing::mlp(2, 16, 8, 4);
  ir::IRModule bound = bind_params(w.mod, w.params);
  ASSERT_EQ(bound.get_function("main")->params.size(), 1u);
  Tensor data = testing::random_tensor({2, 16}, 8);
  std::vector<Tensor> before_inputs = {data};
  for (const auto& [name, t] : w.params) before_inputs.push_back(t);
  testing::expect_same_outputs(w.mod, bound, before_inputs, {data}, 0);
}

}  // namespace
}  // namespace anvil::transform
