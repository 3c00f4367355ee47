// Dynamic shapes through the compiled path: groups whose dims are size variables (batch, seq)
// become kernels that bind the variables from their arguments, the VM allocates from the
// dims' programs, and one executable runs at every size. The reference interpreter is the
// oracle; no group may fall back to it (no invoke_packed in the bytecode).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "anvil/driver/vm_build.h"
#include "anvil/ir/infer_type.h"
#include "anvil/ir/parser.h"
#include "anvil/ir/printer.h"
#include "anvil/reference/reference.h"
#include "anvil/runtime/vm_executable.h"
#include "anvil/support/error.h"
#include "anvil/testing/workloads.h"
#include "support/test_tensors.h"
#include "support/vm_oracle.h"

namespace anvil {
namespace {

using testing::error_of;
using testing::expect_close;
using testing::expect_matches_reference;
using testing::filled;
using testing::pseudo_random;

ir::IRModule parse(const std::string& text) { return ir::infer_type(ir::parse_module(text)); }

// Inputs for the given sizes: each input's dims with size variables replaced.
std::vector<Tensor> inputs_for(const ir::IRModule& mod,
                               const std::vector<std::pair<std::string, int64_t>>& sizes,
                               uint64_t seed) {
  std::vector<Tensor> inputs;
  for (const ir::Var& param : mod.get_function("main")->params) {
    const auto* type = ir::as<ir::TensorTypeNode>(param->checked_type);
    std::vector<ir::Dim> dims = *type->shape;
    std::vector<std::pair<std::string, ir::Dim>> bindings;
    for (const auto& [name, value] : sizes) bindings.emplace_back(name, ir::Dim(value));
    std::vector<int64_t> shape;
    for (const ir::Dim& dim : dims) shape.push_back(ir::substitute(dim, bindings).int_value());
    inputs.push_back(pseudo_random(shape, type->dtype, seed++));
  }
  return inputs;
}

struct DynamicCase {
  const char* name;
  const char* text;
  int opt_level;
};

// Families of groups whose outer dims are size variables, each at several sizes in an order
// that shrinks and grows (storage of a larger run must not leak into a smaller one).
const DynamicCase kCases[] = {
    {"elementwise_chain", R"(
def @main(%x: Tensor[(n, 37), float32], %b: Tensor[(37), float32]) {
  %0 = add(%x, %b);
  %1 = nn.relu(%0);
  %2 = multiply(%1, %x);
  tanh(%2)
})",
     3},
    {"dense_bias_relu", R"(
def @main(%x: Tensor[(n, 24), float32], %w: Tensor[(40, 24), float32], %b: Tensor[(40), float32]) {
  nn.relu(nn.bias_add(nn.dense(%x, %w), %b))
})",
     3},
    {"softmax_last_axis", R"(
def @main(%x: Tensor[(n, 4, 19), float32]) {
  nn.softmax(%x, axis=-1)
})",
     3},
    {"reductions", R"(
def @main(%x: Tensor[(n, 6, 5), float32]) {
  (sum(%x, axis=[1]), max(%x, axis=[2], keepdims=True), mean(%x, axis=[0]))
})",
     3},
    {"conv_pool_nchw", R"(
def @main(%x: Tensor[(n, 3, 10, 10), float32], %w: Tensor[(16, 3, 3, 3), float32], %b: Tensor[(16), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3]);
  %1 = nn.relu(nn.bias_add(%0, %b));
  %2 = nn.max_pool2d(%1, pool_size=[2, 2], strides=[2, 2]);
  nn.global_avg_pool2d(%2)
})",
     3},
    {"conv_pool_symbolic_image", R"(
def @main(%x: Tensor[(n, 4, s, s), float32], %w: Tensor[(8, 4, 3, 3), float32], %g: Tensor[(8, 2, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3]);
  %1 = nn.relu(%0);
  %2 = nn.conv2d(%1, %g, padding=[1, 1, 1, 1], groups=4, channels=8, kernel_size=[3, 3]);
  %3 = nn.max_pool2d(%2, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1]);
  %4 = nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2], ceil_mode=True);
  %5 = nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1]);
  %6 = nn.avg_pool2d(%x, pool_size=[3, 2], strides=[2, 1], padding=[1, 0, 1, 1], ceil_mode=True, count_include_pad=True);
  %7 = nn.max_pool2d(%x, pool_size=[2, 2], dilation=[2, 2], padding=[2, 2, 2, 2]);
  (nn.global_avg_pool2d(%3), nn.global_max_pool2d(%2), %4, %5, %6, %7)
})",
     3},
    {"flatten_transpose_concat", R"(
def @main(%x: Tensor[(n, 2, 3, 4), float32], %y: Tensor[(n, 24), float32]) {
  %0 = nn.batch_flatten(%x);
  %1 = concatenate((%0, %y), axis=1);
  transpose(%1, axes=[1, 0])
})",
     3},
    {"attention_products", R"(
def @main(%q: Tensor[(b, s, 16), float32], %k: Tensor[(b, s, 16), float32], %v: Tensor[(b, 2, s, 8), float32]) {
  %0 = nn.batch_matmul(%q, %k, transpose_b=True);
  %1 = nn.softmax(%0, axis=-1);
  %2 = reshape(%v, newshape=[0, 0, 0, 8]);
  %3 = matmul(%2, transpose(%2, axes=[0, 1, 3, 2]));
  %4 = transpose(%q, axes=[0, 2, 1]);
  (%1, %3, nn.batch_matmul(%1, %4), matmul(%1, %q))
})",
     3},
    {"slices_of_symbolic_tensors", R"(
def @main(%x: Tensor[(n, 12, 5), float32]) {
  %0 = strided_slice(%x, begin=[2, 1], end=[8, 4], axes=[1, 2]);
  %1 = strided_slice(%x, begin=[1], end=[9223372036854775807], axes=[0]);
  (%0, %1)
})",
     3},
    {"split_of_symbolic_tokens", R"(
def @main(%x: Tensor[(b, s, 24), float32]) {
  %0 = split(%x, indices=[8, 16], axis=2);
  %1 = add(%0.0, %0.1);
  (%1, %0.2)
})",
     3},
    {"flattened_tokens", R"(
def @main(%x: Tensor[(b, s, 16), float32], %w: Tensor[(24, 16), float32]) {
  %0 = reshape(%x, newshape=[-1, 16]);
  %1 = nn.relu(nn.dense(%0, %w));
  %2 = nn.softmax(%1, axis=-1);
  reshape_like(%2, %x, lhs_begin=0, lhs_end=1, rhs_begin=0, rhs_end=2)
})",
     3},
    {"embedding_and_positions", R"(
def @main(%ids: Tensor[(b, s), int64], %table: Tensor[(50, 8), float32], %x: Tensor[(b, s), float32]) {
  %0 = clip(%ids, a_min=0f, a_max=49f);
  %1 = take(%table, %0, axis=0);
  (%1, cumsum(%x, axis=1), cumsum(%x, axis=1, exclusive=True))
})",
     3},
    {"two_size_variables", R"(
def @main(%x: Tensor[(b, s, 16), float32], %w: Tensor[(8, 16), float32], %m: Tensor[(b, s), float32]) {
  %0 = nn.dense(%x, %w);
  %1 = nn.softmax(%0, axis=-1);
  %2 = expand_dims(%m, axis=2);
  multiply(%1, %2)
})",
     3},
};

class DynamicGroups : public ::testing::TestWithParam<DynamicCase> {};

TEST_P(DynamicGroups, OneExecutableServesEverySize) {
  const DynamicCase& c = GetParam();
  ir::IRModule mod = parse(c.text);
  driver::BuildOptions options;
  options.pass_context.opt_level = c.opt_level;
  driver::VmModule built = driver::build_vm(mod, {}, options);
  std::string code = built.print_bytecode();
  EXPECT_EQ(code.find("invoke_packed"), std::string::npos) << code;
  EXPECT_TRUE(built.executable()->runtime_funcs.empty()) << code;
  VirtualMachine vm = built.create_vm();
  uint64_t seed = 1;
  for (int64_t n : {8, 3, 1, 8, 5}) {
    std::string what = std::string(c.name) + " at size " + std::to_string(n);
    std::vector<Tensor> inputs = inputs_for(mod, {{"n", n}, {"b", n}, {"s", 2 * n + 1}}, seed++);
    expect_matches_reference(vm, mod, inputs, what);
  }
}

INSTANTIATE_TEST_SUITE_P(Families, DynamicGroups, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

// Operands whose dims are different size variables broadcast to broadcast(a, b): elementwise,
// where (a causal mask cut to a sequence length that arrives separately) and the batch dims
// of matmul, at sizes where either side is 1 or both are equal; sizes that do not broadcast
// are refused when the result is allocated. A size variable against a constant dim reads
// element 0 where it is 1.
TEST(DynamicShapes, UnrelatedSizeVariablesBroadcast) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(a, 3), float32], %y: Tensor[(b, 3), float32], %c: Tensor[(a, 1, s), bool],
          %p: Tensor[(s), float32], %m: Tensor[(a, 2, 3), float32], %n: Tensor[(b, 3, 4), float32],
          %k: Tensor[(a), float32], %r: Tensor[(3), float32]) {
  %0 = add(%x, %y);
  %1 = where(%c, %p, %x);
  (%0, %1, matmul(%m, %n), subtract(%k, %r))
}
)");
  driver::VmModule built = driver::build_vm(mod, {});
  EXPECT_TRUE(built.executable()->runtime_funcs.empty()) << built.print_bytecode();
  VirtualMachine vm = built.create_vm();
  uint64_t seed = 3;
  for (auto [a, b, s] : {std::tuple{3, 3, 3}, {1, 3, 1}, {3, 1, 3}, {1, 1, 1}, {1, 4, 3}}) {
    std::string what = "a " + std::to_string(a) + " b " + std::to_string(b);
    // %k against the constant 3 broadcasts only where a is 1 or 3; a = 4 is only for the rest.
    std::vector<Tensor> inputs = inputs_for(mod, {{"a", a}, {"b", b}, {"s", s}}, seed++);
    expect_matches_reference(vm, mod, inputs, what);
  }
  std::vector<Tensor> bad = inputs_for(mod, {{"a", 2}, {"b", 3}, {"s", 1}}, 1);
  for (size_t i = 0; i < bad.size(); ++i) vm.set_input(i, bad[i]);
  EXPECT_NE(error_of([&] { vm.run(); }).find("-1"), std::string::npos);
}

// A residual stream that broadcasts with a new size variable per step: its size is a nest of
// broadcasts, each step's operand bound once inside the kernels (and a repeated operand adding
// nothing), at sizes where any of them is 1.
TEST(DynamicShapes, NestedBroadcastsOfAResidualStream) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(a, 3), float32], %y: Tensor[(b, 3), float32], %z: Tensor[(c, 3), float32],
          %w: Tensor[(d, 3), float32]) {
  %0 = add(%x, %y);
  %1 = add(%0, %z);
  %2 = multiply(%1, %x);
  %3 = add(%2, %w);
  %4 = subtract(%3, %y);
  nn.relu(%4)
}
)");
  driver::VmModule built = driver::build_vm(mod, {});
  EXPECT_TRUE(built.executable()->runtime_funcs.empty()) << built.print_bytecode();
  VirtualMachine vm = built.create_vm();
  uint64_t seed = 5;
  for (auto [a, b, c, d] : {std::tuple{3, 3, 3, 3},
                            {1, 3, 1, 3},
                            {3, 1, 1, 1},
                            {1, 1, 1, 1},
                            {1, 1, 1, 4},
                            {2, 1, 2, 1}}) {
    std::string what = "a " + std::to_string(a) + " b " + std::to_string(b) + " c " +
                       std::to_string(c) + " d " + std::to_string(d);
    std::vector<Tensor> inputs = inputs_for(mod, {{"a", a}, {"b", b}, {"c", c}, {"d", d}}, seed++);
    expect_matches_reference(vm, mod, inputs, what);
  }
}

TEST(DynamicShapes, SharedSizeVariableMustAgreeAcrossInputs) {
  ir::IRModule mod = parse(R"(
def @main(%ids: Tensor[(batch, 4), float32], %mask: Tensor[(batch, 4), float32]) {
  multiply(%ids, %mask)
})");
  VirtualMachine vm = driver::build_vm(mod, {}).create_vm();
  vm.set_input("ids", Tensor::zeros({3, 4}, DataType::float32()));
  vm.set_input("mask", Tensor::zeros({5, 4}, DataType::float32()));
  EXPECT_EQ(error_of([&] { vm.run(); }),
            "run: input 'mask' has batch = 5 in dim 0, but input 'ids' has batch = 3 in dim 0");
  EXPECT_EQ(error_of([&] {
              vm.set_input("ids", Tensor::zeros({3, 5}, DataType::float32()));
            }),
            "set_input: input 'ids' has 5 in dim 1, but the model fixes that dim at 4 (expects "
            "(?, 4) float32)");
  vm.set_input("mask", Tensor::zeros({3, 4}, DataType::float32()));
  vm.run();
  EXPECT_EQ(vm.get_output(0).shape_vector(), (std::vector<int64_t>{3, 4}));
}

// A kernel whose tensors hold b and s only inside b * s takes them as scalar arguments.
TEST(DynamicShapes, KernelsTakeSizeVariablesTheirTensorsHide) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(b, s, 16), float32], %w: Tensor[(24, 16), float32]) {
  %0 = reshape(%x, newshape=[-1, 16]);
  %1 = nn.dense(%0, %w);
  nn.softmax(%1, axis=-1)
})");
  driver::VmModule built = driver::build_vm(mod, {});
  std::string code = built.print_bytecode();
  EXPECT_NE(code.find("sizes b, s"), std::string::npos) << code;
  // The size arguments travel with the serialized executable.
  const vm::Executable& exec = *built.executable();
  auto loaded = std::make_shared<vm::Executable>(
      vm::load_executable(vm::save_executable(exec), exec.lib, "mod.vm"));
  EXPECT_EQ(vm::print_bytecode(*loaded), code);
  VirtualMachine vm(loaded);
  for (auto [b, s] : {std::pair<int64_t, int64_t>{2, 3}, {1, 5}, {4, 1}}) {
    Tensor x = pseudo_random({b, s, 16}, DataType::float32(), uint64_t(b * 10 + s));
    Tensor w = pseudo_random({24, 16}, DataType::float32(), 7);
    vm.set_input("x", x);
    vm.set_input("w", w);
    vm.run();
    expect_close(reference::Interpreter(mod).run({x, w})[0], vm.get_output(0), "token scores");
  }
}

TEST(DynamicShapes, BytecodeAllocatesFromSizeVariables) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(n, 4), float32]) {
  nn.relu(%x)
})");
  std::string code = driver::build_vm(mod, {}).print_bytecode();
  EXPECT_NE(code.find("def @main(%x: Tensor[(n, 4), float32])"), std::string::npos) << code;
  EXPECT_NE(code.find("alloc_tensor Tensor[(n, 4), float32]"), std::string::npos) << code;
}

// A workload's module with its batch of 1 made the size variable `batch`: the signature line's
// leading 1s (the input's and the result's) are rewritten in the text form, which type
// inference then carries through the body.
ir::IRModule with_symbolic_batch(const testing::Workload& w) {
  ir::PrintOptions print;
  print.include_metadata = false;
  std::string text = ir::print_module(w.mod, print);
  size_t def = text.find("def @main(");
  EXPECT_NE(def, std::string::npos) << text.substr(0, 400);
  size_t line_end = text.find('\n', def);
  std::string header = text.substr(def, line_end - def);
  for (size_t at; (at = header.find("[(1, ")) != std::string::npos;)
    header.replace(at, 5, "[(batch, ");
  text.replace(def, line_end - def, header);
  return parse(text);
}

// Builds w with a symbolic batch at opt level 3, checks that no group falls back and that the
// bytecode holds `kernel`, and compares with the reference interpreter at each batch.
void expect_symbolic_batch_runs(const testing::Workload& w, const std::vector<int64_t>& item_shape,
                                const std::string& kernel, const std::vector<int64_t>& batches) {
  ir::IRModule mod = with_symbolic_batch(w);
  driver::BuildOptions options;
  options.pass_context.opt_level = 3;
  driver::VmModule built = driver::build_vm(mod, w.params, options);
  std::string code = built.print_bytecode();
  EXPECT_EQ(code.find("invoke_packed"), std::string::npos) << code;
  EXPECT_NE(code.find(kernel), std::string::npos) << code;
  VirtualMachine vm = built.create_vm();
  for (int64_t batch : batches) {
    SCOPED_TRACE(batch);
    std::vector<int64_t> shape = {batch};
    shape.insert(shape.end(), item_shape.begin(), item_shape.end());
    Tensor data = pseudo_random(shape, DataType::float32(), uint64_t(batch));
    std::vector<Tensor> inputs = {data};
    for (const auto& [name, value] : w.params) inputs.push_back(value);
    vm.set_input("data", data);
    vm.run();
    std::vector<Tensor> expected = reference::Interpreter(mod).run(inputs);
    expect_close(expected[0], vm.get_output(0), "batch " + std::to_string(batch));
  }
}

// ResNet-18 (small images) with a symbolic batch: every group compiled, and the blocked layout
// survives, so the convolutions keep their x86 schedule.
TEST(DynamicShapes, ResnetWithSymbolicBatch) {
  expect_symbolic_batch_runs(testing::resnet(18, 1, {3, 32, 32}, 10), {3, 32, 32},
                             "nn_contrib_conv2d_NCHWc", {1, 3, 2});
}

// An MLP with a symbolic batch: the packed dense layers keep the x86 schedule, whose row tiles
// of 4 are cut at run time (full tiles without guards, a guarded last one), at batches that
// do and do not fill the last tile.
TEST(DynamicShapes, MlpWithSymbolicBatch) {
  expect_symbolic_batch_runs(testing::mlp(1, 96, 64, 10), {96}, "nn_contrib_dense_pack",
                             {1, 4, 7, 13, 2});
}

}  // namespace
}  // namespace anvil
