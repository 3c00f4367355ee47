// Compiled kernels through the graph executor, and packages: TE kernels compiled with LLVM (and
// the C back end), exported as .tar and as a self-contained .so, loaded back by load_module and
// by package_runner (a program linked with the runtime alone), compared with plain C++.
#include "anvil/runtime/package.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "anvil/codegen/llvm.h"
#include "anvil/runtime/graph_executor.h"
#include "anvil/runtime/npy.h"
#include "anvil/support/error.h"
#include "anvil/te/te.h"
#include "anvil/tir/transform.h"
#include "driver/export.h"
#include "support/test_util.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;
using anvil::testing::CommandResult;
using anvil::testing::read_file;
using anvil::testing::run_command;
using anvil::testing::ScratchDir;
using anvil::testing::write_file;
using tir::PrimExpr;
using tir::Var;

template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

constexpr int64_t kRows = 3, kCols = 7;

// C = op(A, B) over (kRows, kCols) float32 tensors.
template <typename Op>
tir::PrimFunc binary_kernel(const std::string& name, Op op) {
  te::Tensor a = te::placeholder({kRows, kCols}, DataType::float32(), "A");
  te::Tensor b = te::placeholder({kRows, kCols}, DataType::float32(), "B");
  te::Tensor c = te::compute(
      {kRows, kCols}, [&](const std::vector<Var>& i) { return op(a(i[0], i[1]), b(i[0], i[1])); },
      "C");
  return tir::transform::lower(te::create_prim_func({a, b, c}, name));
}

tir::PrimFunc relu_kernel() {
  te::Tensor x = te::placeholder({kRows, kCols}, DataType::float32(), "X");
  te::Tensor y = te::compute(
      {kRows, kCols},
      [&](const std::vector<Var>& i) {
        return tir::max(x(i[0], i[1]), tir::make_const(DataType::float32(), 0));
      },
      "Y");
  return tir::transform::lower(te::create_prim_func({x, y}, "fused_relu"));
}

std::vector<tir::PrimFunc> kernels() {
  return {binary_kernel("fused_add", [](PrimExpr a, PrimExpr b) { return a + b; }),
          binary_kernel("fused_multiply", [](PrimExpr a, PrimExpr b) { return a * b; }),
          relu_kernel()};
}

// out0 = relu(x + w) * x, out1 = relu(x + w); w is a param. The product reuses the sum's
// storage; the relu result is a head and keeps its own.
const char* kGraph = R"({
  "nodes": [
    {"op": "null", "name": "x", "inputs": []},
    {"op": "null", "name": "w", "inputs": []},
    {"op": "tvm_op", "name": "fused_add", "attrs": {"func_name": "fused_add",
     "num_inputs": "2", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[0, 0, 0], [1, 0, 0]]},
    {"op": "tvm_op", "name": "fused_relu", "attrs": {"func_name": "fused_relu",
     "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[2, 0, 0]]},
    {"op": "tvm_op", "name": "fused_multiply", "attrs": {"func_name": "fused_multiply",
     "num_inputs": "2", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[3, 0, 0], [0, 0, 0]]}
  ],
  "arg_nodes": [0, 1],
  "node_row_ptr": [0, 1, 2, 3, 4, 5],
  "heads": [[4, 0, 0], [3, 0, 0]],
  "attrs": {
    "dltype": ["list_str", ["float32", "float32", "float32", "float32", "float32"]],
    "shape": ["list_shape", [[3, 7], [3, 7], [3, 7], [3, 7], [3, 7]]],
    "storage_id": ["list_int", [0, 1, 2, 3, 2]]
  }
})";

Tensor random_matrix(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2, 2);
  Tensor t = Tensor::empty({kRows, kCols}, DataType::float32());
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = dist(rng);
  return t;
}

// The two outputs of kGraph computed directly.
std::pair<std::vector<float>, std::vector<float>> reference(const Tensor& x, const Tensor& w) {
  std::vector<float> product, relu;
  for (int64_t i = 0; i < x.numel(); ++i) {
    float r = std::max(x.data_as<float>()[i] + w.data_as<float>()[i], 0.0f);
    relu.push_back(r);
    product.push_back(r * x.data_as<float>()[i]);
  }
  return {product, relu};
}

void expect_values(const Tensor& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.numel(), int64_t(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_FLOAT_EQ(actual.data_as<float>()[i], expected[i]) << "element " << i;
}

void expect_graph_outputs(GraphExecutor& executor, const Tensor& x, const Tensor& w) {
  auto [product, relu] = reference(x, w);
  ASSERT_EQ(executor.get_num_outputs(), 2);
  expect_values(executor.get_output(0), product);
  expect_values(executor.get_output(1), relu);
}

TEST(CompiledGraphTest, ExecutorRunsJitCompiledKernels) {
  GraphExecutor executor(kGraph, codegen::jit_compile(kernels()));
  Tensor x = random_matrix(1), w = random_matrix(2);
  executor.load_params({{"w", w}});
  executor.set_input("x", x);
  executor.run();
  expect_graph_outputs(executor, x, w);
  // A second input through the same storage.
  Tensor x2 = random_matrix(3);
  executor.set_input("x", x2);
  executor.run();
  expect_graph_outputs(executor, x2, w);
}

// Exports kGraph with w as its param and checks what load_module gives back.
void export_and_check(const fs::path& path, const codegen::Target& target) {
  Tensor x = random_matrix(11), w = random_matrix(12);
  driver::export_package(path.string(), kGraph, kernels(), target, {{"w", w}});
  ASSERT_TRUE(fs::exists(path));
  Package package = load_module(path.string());
  EXPECT_EQ(package.graph_json, kGraph);
  ASSERT_EQ(package.params.size(), 1u);
  EXPECT_EQ(package.params[0].first, "w");
  EXPECT_EQ(package.lib.function_names(),
            (std::vector<std::string>{"fused_add", "fused_multiply", "fused_relu"}));
  GraphExecutor executor = package.create_executor();
  EXPECT_EQ(executor.get_num_inputs(), 1);
  executor.set_input("x", x);
  executor.run();
  expect_graph_outputs(executor, x, w);
}

TEST(PackageTest, TarAndSharedObjectLoadBackAndRun) {
  ScratchDir dir;
  export_and_check(dir / "model.tar", codegen::Target::host());
  export_and_check(dir / "model.so", codegen::Target::host());
  // The .tar is an ordinary archive: the system's tar lists its three members.
  CommandResult listing = run_command({"/usr/bin/tar", "-tf", (dir / "model.tar").string()});
  EXPECT_EQ(listing.exit_code, 0) << listing.err;
  EXPECT_EQ(listing.out, "mod.so\nmod.json\nmod.params\n");
  // The format is read from the content: a .tar renamed to .so still loads, and back.
  fs::rename(dir / "model.tar", dir / "tar_named.so");
  fs::rename(dir / "model.so", dir / "so_named.tar");
  EXPECT_EQ(load_module((dir / "tar_named.so").string()).graph_json, kGraph);
  EXPECT_EQ(load_module((dir / "so_named.tar").string()).graph_json, kGraph);
  // Nothing but the packages is left in the directory.
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir.path()))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"so_named.tar", "tar_named.so"}));
}

TEST(PackageTest, CBackEndPackagesRunToo) {
  ScratchDir dir;
  codegen::Target c_target;
  c_target.kind = "c";
  export_and_check(dir / "model_c.tar", c_target);
  export_and_check(dir / "model_c.so", c_target);
}

TEST(PackageTest, LargeParamsGoIntoTheSharedObjectAsTheyAre) {
  // 16 MiB of params, echoed by "__copy": a C array of this size would take a compiler minutes.
  const int64_t count = int64_t(4) << 20;
  const char* graph = R"({
    "nodes": [
      {"op": "null", "name": "big", "inputs": []},
      {"op": "tvm_op", "name": "echo", "attrs": {"func_name": "__copy", "num_inputs": "1",
       "num_outputs": "1"}, "inputs": [[0, 0, 0]]}
    ],
    "arg_nodes": [0], "node_row_ptr": [0, 1, 2], "heads": [[1, 0, 0]],
    "attrs": {"dltype": ["list_str", ["float32", "float32"]],
              "shape": ["list_shape", [[4194304], [4194304]]],
              "storage_id": ["list_int", [0, 1]]}
  })";
  Tensor big = Tensor::empty({count}, DataType::float32());
  for (int64_t i = 0; i < count; ++i) big.data_as<float>()[i] = float(i % 1000) * 0.5f;
  ScratchDir dir;
  driver::export_package((dir / "big.so").string(), graph, {relu_kernel()}, codegen::Target::host(),
                         {{"big", big}});
  EXPECT_GT(fs::file_size(dir / "big.so"), uint64_t(count * 4));
  GraphExecutor executor = load_module((dir / "big.so").string()).create_executor();
  EXPECT_EQ(executor.get_num_inputs(), 0);
  executor.run();
  Tensor out = executor.get_output(0);
  ASSERT_EQ(out.numel(), count);
  EXPECT_EQ(std::memcmp(out.data(), big.data(), size_t(count * 4)), 0);
}

TEST(PackageTest, ExportErrorsLeaveNoFileBehind) {
  ScratchDir dir;
  EXPECT_EQ(error_of([&] {
              driver::export_package((dir / "m.zip").string(), kGraph, kernels(),
                                     codegen::Target::host(), {});
            }),
            "cannot write package '" + (dir / "m.zip").string() +
                "': unknown extension '.zip' (use .tar or .so)");
  EXPECT_TRUE(contains(error_of([&] {
                         driver::export_package((dir / "no_such_dir" / "m.tar").string(), kGraph,
                                                kernels(), codegen::Target::host(), {});
                       }),
                       "cannot create a temporary directory"));
  // A failure after an earlier export leaves the earlier file as it was.
  write_file(dir / "m.tar", "previous contents");
  Tensor w = random_matrix(5);
  EXPECT_TRUE(contains(error_of([&] {
                         driver::export_package((dir / "m.tar").string(), kGraph, kernels(),
                                                codegen::Target::host(), {{"w", w}, {"w", w}});
                       }),
                       "'w'"));
  EXPECT_EQ(read_file(dir / "m.tar"), "previous contents");
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir.path()))
    names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"m.tar"}));
}

TEST(PackageRunnerTest, RunsBothPackagesWithTheRuntimeAlone) {
  ScratchDir dir;
  Tensor x = random_matrix(21), w = random_matrix(22);
  write_npz(dir / "inputs.npz", {{"x", x}}, /*compress=*/false);
  auto [product, relu] = reference(x, w);
  for (const char* name : {"model.tar", "model.so"}) {
    driver::export_package((dir / name).string(), kGraph, kernels(), codegen::Target::host(),
                           {{"w", w}});
    fs::path outputs = dir / (std::string(name) + ".outputs.npz");
    CommandResult result = run_command({ANVIL_PACKAGE_RUNNER, (dir / name).string(),
                                        (dir / "inputs.npz").string(), outputs.string()});
    ASSERT_EQ(result.exit_code, 0) << name << ": " << result.err;
    NamedTensors got = read_npz(outputs);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].first, "output_0");
    EXPECT_EQ(got[1].first, "output_1");
    expect_values(got[0].second, product);
    expect_values(got[1].second, relu);
  }
  // A wrong input is reported as a one-line error.
  write_npz(dir / "bad.npz", {{"y", x}}, false);
  CommandResult bad = run_command({ANVIL_PACKAGE_RUNNER, (dir / "model.tar").string(),
                                   (dir / "bad.npz").string(), (dir / "o.npz").string()});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err, "package_runner: error: the graph has no input named 'y'\n");
  EXPECT_FALSE(fs::exists(dir / "o.npz"));
}

TEST(PackageRunnerTest, NeitherTheRunnerNorTheRuntimeLinksLlvmOrProtobuf) {
  for (const char* binary : {ANVIL_PACKAGE_RUNNER, ANVIL_RUNTIME_LIBRARY}) {
    CommandResult ldd = run_command({"/usr/bin/ldd", binary});
    ASSERT_EQ(ldd.exit_code, 0) << binary << ": " << ldd.err;
    EXPECT_FALSE(contains(ldd.out, "libLLVM")) << binary << "\n" << ldd.out;
    EXPECT_FALSE(contains(ldd.out, "libprotobuf")) << binary << "\n" << ldd.out;
  }
  CommandResult runner = run_command({"/usr/bin/ldd", ANVIL_PACKAGE_RUNNER});
  EXPECT_TRUE(contains(runner.out, "libanvil_runtime.so")) << runner.out;
}

}  // namespace
}  // namespace anvil
