// The graph executor on hand-written graph JSON whose kernels are plain C++ functions, checked
// against the same arithmetic done directly.
#include "anvil/runtime/graph_executor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "anvil/runtime/packed_func.h"
#include "anvil/runtime/params.h"
#include "anvil/support/error.h"

// The replacement below pairs operator new with free, which GCC's inliner reports as a
// mismatch although it is how a replaced allocator must work.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

// Counts every operator new in the process, so a test can check that run() allocates nothing.
namespace {
std::atomic<int64_t> g_allocations{0};

void* counted_allocation(std::size_t size) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size ? size : 1);
}
}  // namespace

// The whole unaligned family is replaced, so that every pair of allocation and release goes
// through malloc and free (the sanitizers check that they match).
void* operator new(std::size_t size) {
  if (void* p = counted_allocation(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = counted_allocation(size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return counted_allocation(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return counted_allocation(size);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace anvil {
namespace {

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

void expect_same_size(const Tensor& a, const Tensor& b) {
  if (a.numel() != b.numel()) throw_error("element counts differ");
}

// Elementwise float32 kernels: out = f(a, b).
template <typename F>
PackedFunc binary_kernel(F f) {
  return PackedFunc::from_typed([f](Tensor a, Tensor b, Tensor out) {
    expect_same_size(a, out);
    expect_same_size(b, out);
    for (int64_t i = 0; i < out.numel(); ++i)
      out.data_as<float>()[i] = f(a.data_as<float>()[i], b.data_as<float>()[i]);
  });
}

PackedFunc relu_kernel() {
  return PackedFunc::from_typed([](Tensor x, Tensor out) {
    expect_same_size(x, out);
    for (int64_t i = 0; i < out.numel(); ++i)
      out.data_as<float>()[i] = std::max(x.data_as<float>()[i], 0.0f);
  });
}

Module test_kernels() {
  Module lib = Module::create("test_kernels");
  lib.add_function("add", binary_kernel([](float a, float b) { return a + b; }));
  lib.add_function("mul", binary_kernel([](float a, float b) { return a * b; }));
  lib.add_function("relu", relu_kernel());
  // Two outputs: x * 2 and x + 1.
  lib.add_function("double_and_increment",
                   PackedFunc::from_typed([](Tensor x, Tensor twice, Tensor plus_one) {
                     expect_same_size(x, twice);
                     expect_same_size(x, plus_one);
                     for (int64_t i = 0; i < x.numel(); ++i) {
                       twice.data_as<float>()[i] = 2 * x.data_as<float>()[i];
                       plus_one.data_as<float>()[i] = x.data_as<float>()[i] + 1;
                     }
                   }));
  lib.add_function(
      "fail", PackedFunc::from_typed([](Tensor, Tensor) { throw_error("the kernel refuses"); }));
  lib.add_function("sleep_2ms", PackedFunc::from_typed([](Tensor x, Tensor out) {
                     std::this_thread::sleep_for(std::chrono::milliseconds(2));
                     out.copy_from(x);
                   }));
  return lib;
}

Tensor vector_of(std::vector<float> values) {
  Tensor t = Tensor::empty({int64_t(values.size())}, DataType::float32());
  for (size_t i = 0; i < values.size(); ++i) t.data_as<float>()[i] = values[i];
  return t;
}

std::vector<float> values_of(const Tensor& t) {
  return std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.numel());
}

// relu(relu(x + y) * x) + y over four elements. Six node entries in four storage slots: the
// product reuses the sum's slot and the final sum the first relu's slot, as a planner would.
const char* kChainGraph = R"({
  "nodes": [
    {"op": "null", "name": "x", "inputs": []},
    {"op": "null", "name": "y", "inputs": []},
    {"op": "tvm_op", "name": "add0", "attrs": {"func_name": "add", "num_inputs": "2",
     "num_outputs": "1", "flatten_data": "0"}, "inputs": [[0, 0, 0], [1, 0, 0]]},
    {"op": "tvm_op", "name": "relu0", "attrs": {"func_name": "relu", "num_inputs": "1",
     "num_outputs": "1", "flatten_data": "0"}, "inputs": [[2, 0, 0]]},
    {"op": "tvm_op", "name": "mul0", "attrs": {"func_name": "mul", "num_inputs": "2",
     "num_outputs": "1", "flatten_data": "0"}, "inputs": [[3, 0, 0], [0, 0, 0]]},
    {"op": "tvm_op", "name": "relu1", "attrs": {"func_name": "relu", "num_inputs": "1",
     "num_outputs": "1", "flatten_data": "0"}, "inputs": [[4, 0, 0]]},
    {"op": "tvm_op", "name": "add1", "attrs": {"func_name": "add", "num_inputs": "2",
     "num_outputs": "1", "flatten_data": "0"}, "inputs": [[5, 0, 0], [1, 0, 0]]}
  ],
  "arg_nodes": [0, 1],
  "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7],
  "heads": [[6, 0, 0]],
  "attrs": {
    "dltype": ["list_str", ["float32", "float32", "float32", "float32", "float32", "float32",
                            "float32"]],
    "shape": ["list_shape", [[4], [4], [4], [4], [4], [4], [4]]],
    "storage_id": ["list_int", [0, 1, 2, 3, 2, 3, 2]],
    "device_index": ["list_int", [1, 1, 1, 1, 1, 1, 1]]
  }
})";

std::vector<float> chain_reference(const std::vector<float>& x, const std::vector<float>& y) {
  std::vector<float> out;
  for (size_t i = 0; i < x.size(); ++i)
    out.push_back(std::max(std::max(x[i] + y[i], 0.0f) * x[i], 0.0f) + y[i]);
  return out;
}

TEST(GraphExecutorTest, ChainWithStorageReuseMatchesPlainArithmetic) {
  GraphExecutor executor(kChainGraph, test_kernels());
  std::vector<float> x = {1.5f, -2.0f, 0.25f, 3.0f}, y = {-4.0f, 1.0f, 0.5f, -1.0f};
  executor.set_input("x", vector_of(x));
  executor.set_input("y", vector_of(y));
  executor.run();
  ASSERT_EQ(executor.get_num_outputs(), 1);
  EXPECT_EQ(values_of(executor.get_output(0)), chain_reference(x, y));

  // New inputs, same storage: the output is overwritten in place.
  void* first_output = executor.get_output(0).data();
  x = {-1.0f, 2.0f, 3.0f, -0.5f};
  executor.set_input(0, vector_of(x));
  executor.run();
  EXPECT_EQ(executor.get_output(0).data(), first_output);
  EXPECT_EQ(values_of(executor.get_output(0)), chain_reference(x, y));
}

// The chain with anvil's arena: the four intermediate values (16 bytes each, two alive at a
// time) at offsets 0, 64, 0 and 64 of one 80-byte arena instead of slots 2 and 3.
std::string chain_graph_with_arena() {
  std::string graph = kChainGraph;
  std::string slots = "\"storage_id\": [\"list_int\", [0, 1, 2, 3, 2, 3, 2]],";
  graph.replace(graph.find(slots), slots.size(),
                slots + R"( "arena_offset": ["list_int", [-1, -1, 0, 64, 0, 64, -1]],
    "largest_live_set_bytes": ["size_t", 32],)");
  return graph;
}

TEST(GraphExecutorTest, ArenaOffsetsPlaceTheIntermediateValues) {
  GraphExecutor executor(chain_graph_with_arena(), test_kernels());
  std::vector<float> x = {1.5f, -2.0f, 0.25f, 3.0f}, y = {-4.0f, 1.0f, 0.5f, -1.0f};
  executor.set_input("x", vector_of(x));
  executor.set_input("y", vector_of(y));
  executor.run();
  EXPECT_EQ(values_of(executor.get_output(0)), chain_reference(x, y));
  // The arena ends with the last value at 64; slot 2 keeps only the output, slot 3 nothing.
  GraphMemoryUse use = executor.memory_use();
  EXPECT_EQ(use.activation_bytes, 80);
  EXPECT_EQ(use.largest_live_set, 32);
  EXPECT_EQ(use.io_bytes, 48);
  EXPECT_EQ(use.param_bytes, 0);
  executor.load_params({{"y", vector_of(y)}});
  use = executor.memory_use();
  EXPECT_EQ(use.param_bytes, 16);
  EXPECT_EQ(use.io_bytes, 32);
}

// Without the arena the slots say it all: slot 3 holds activations only, slot 2 the output as
// well, so it counts with the inputs and outputs; a graph not written by anvil has no live set.
TEST(GraphExecutorTest, MemoryUseFromTheSlots) {
  GraphExecutor executor(kChainGraph, test_kernels());
  GraphMemoryUse use = executor.memory_use();
  EXPECT_EQ(use.activation_bytes, 16);
  EXPECT_EQ(use.largest_live_set, -1);
  EXPECT_EQ(use.io_bytes, 48);
  EXPECT_EQ(use.param_bytes, 0);
}

TEST(GraphExecutorTest, RunAllocatesNothing) {
  GraphExecutor executor(kChainGraph, test_kernels());
  executor.set_input("x", vector_of({1, 2, 3, 4}));
  executor.set_input("y", vector_of({1, 2, 3, 4}));
  executor.run();
  int64_t before = g_allocations.load();
  executor.run();
  executor.run();
  int64_t after = g_allocations.load();
  EXPECT_EQ(after - before, 0) << "run() allocated";
}

TEST(GraphExecutorTest, OutputStaysValidAfterTheExecutorIsGone) {
  Tensor output;
  {
    GraphExecutor executor(kChainGraph, test_kernels());
    executor.set_input("x", vector_of({1, 2, 3, 4}));
    executor.set_input("y", vector_of({0, 0, 0, 0}));
    executor.run();
    output = executor.get_output(0);
  }
  EXPECT_EQ(values_of(output), (std::vector<float>{1, 4, 9, 16}));
}

TEST(GraphExecutorTest, MultipleOutputsCopyAndGlobalFunctions) {
  register_global("test.graph_executor.negate", PackedFunc::from_typed([](Tensor x, Tensor out) {
                    for (int64_t i = 0; i < x.numel(); ++i)
                      out.data_as<float>()[i] = -x.data_as<float>()[i];
                  }),
                  /*override_existing=*/true);
  // Heads in an order other than the node order, and an input echoed through "__copy".
  const char* graph = R"({
    "nodes": [
      {"op": "null", "name": "x", "inputs": []},
      {"op": "tvm_op", "name": "split", "attrs": {"func_name": "double_and_increment",
       "num_inputs": "2", "num_outputs": "2"}, "inputs": [[0, 0, 0]]},
      {"op": "tvm_op", "name": "neg", "attrs": {"func_name": "test.graph_executor.negate",
       "num_inputs": 1, "num_outputs": 1}, "inputs": [[1, 1]]},
      {"op": "tvm_op", "name": "echo", "attrs": {"func_name": "__copy", "num_inputs": "1",
       "num_outputs": "1"}, "inputs": [[0, 0, 0]]}
    ],
    "arg_nodes": [0],
    "node_row_ptr": [0, 1, 3, 4, 5],
    "heads": [[2, 0, 0], [1, 0, 0], [3, 0, 0]],
    "attrs": {
      "dltype": ["list_str", ["float32", "float32", "float32", "float32", "float32"]],
      "shape": ["list_shape", [[3], [3], [3], [3], [3]]],
      "storage_id": ["list_int", [0, 1, 2, 3, 4]]
    }
  })";
  // num_inputs "2" above is wrong on purpose: the node has one input.
  EXPECT_TRUE(contains(error_of([&] { GraphExecutor(graph, test_kernels()); }),
                       "node 1 ('split'): attrs say num_inputs 2, but 'inputs' has 1"));
  std::string fixed = graph;
  fixed.replace(fixed.find("\"num_inputs\": \"2\""), 17, "\"num_inputs\": \"1\"");
  GraphExecutor executor(fixed, test_kernels());
  executor.set_input("x", vector_of({1, -2, 3}));
  executor.run();
  ASSERT_EQ(executor.get_num_outputs(), 3);
  EXPECT_EQ(values_of(executor.get_output(0)), (std::vector<float>{-2, 1, -4}));
  EXPECT_EQ(values_of(executor.get_output(1)), (std::vector<float>{2, -4, 6}));
  EXPECT_EQ(values_of(executor.get_output(2)), (std::vector<float>{1, -2, 3}));
  remove_global("test.graph_executor.negate");
}

TEST(GraphExecutorTest, ParamsLeaveTheInputListOnceLoaded) {
  GraphExecutor executor(kChainGraph, test_kernels());
  // Before any params are loaded every graph input is an input.
  EXPECT_EQ(executor.get_num_inputs(), 2);
  EXPECT_EQ(executor.get_input_index("x"), 0);
  EXPECT_EQ(executor.get_input_index("y"), 1);
  EXPECT_EQ(executor.get_input_index("nope"), -1);

  std::vector<float> x = {1, 2, 3, 4}, y = {0.5f, -8, 2, 1};
  // Loading "x" as a param moves it behind the remaining inputs.
  executor.load_params(save_params({{"x", vector_of(x)}}));
  EXPECT_EQ(executor.get_num_inputs(), 1);
  std::vector<InputInfo> info = executor.get_input_info();
  ASSERT_EQ(info.size(), 1u);
  EXPECT_EQ(info[0].name, "y");
  EXPECT_EQ(info[0].shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(info[0].dtype, DataType::float32());
  EXPECT_EQ(executor.get_input_index("y"), 0);
  EXPECT_EQ(executor.get_input_index("x"), 1);
  EXPECT_EQ(values_of(executor.get_input(1)), x);

  executor.set_input(0, vector_of(y));
  executor.run();
  EXPECT_EQ(values_of(executor.get_output(0)), chain_reference(x, y));
}

TEST(GraphExecutorTest, BadInputsAndParamsAreNamed) {
  GraphExecutor executor(kChainGraph, test_kernels());
  EXPECT_EQ(error_of([&] { executor.set_input("z", vector_of({1})); }),
            "the graph has no input named 'z'");
  EXPECT_EQ(error_of([&] {
              executor.set_input("x", vector_of({1, 2}));
            }),
            "set_input: input 'x' expects (4,) float32, got (2,) float32");
  EXPECT_EQ(error_of([&] { executor.set_input("y", Tensor::zeros({4}, DataType::int32())); }),
            "set_input: input 'y' expects (4,) float32, got (4,) int32");
  EXPECT_EQ(error_of([&] { executor.set_input(7, vector_of({1})); }),
            "input index 7 is out of range: the graph has 2 inputs (params included)");
  EXPECT_EQ(error_of([&] { executor.get_output(1); }),
            "output index 1 is out of range: the graph has 1 outputs");
  EXPECT_EQ(error_of([&] {
              executor.load_params({{"w", vector_of({1})}});
            }),
            "load_params: param 'w' is not an input of the graph");
  // A failing set changes nothing: "x" stays an input.
  EXPECT_EQ(error_of([&] {
              executor.load_params({{"x", vector_of({1, 2, 3, 4})}, {"y", vector_of({1})}});
            }),
            "load_params: input 'y' expects (4,) float32, got (1,) float32");
  EXPECT_EQ(executor.get_num_inputs(), 2);
  EXPECT_TRUE(
      contains(error_of([&] { executor.load_params(std::string_view("junk")); }), "params blob"));
}

TEST(GraphExecutorTest, ZeroCopyInputIsReadInPlaceUntilACopyReplacesIt) {
  GraphExecutor executor(kChainGraph, test_kernels());
  Tensor x = vector_of({1, 2, 3, 4});
  std::vector<float> y = {0, 0, 0, 0};
  executor.set_input("y", vector_of(y));
  executor.set_input_zero_copy("x", x);
  executor.run();
  EXPECT_EQ(values_of(executor.get_output(0)), chain_reference(values_of(x), y));
  EXPECT_EQ(executor.get_input(0).data(), x.data());

  // Writing the caller's buffer changes the next run without another set_input.
  x.data_as<float>()[0] = -3;
  x.data_as<float>()[3] = 5;
  executor.run();
  EXPECT_EQ(values_of(executor.get_output(0)), chain_reference(values_of(x), y));

  // A copying set_input goes back to executor storage and leaves the caller's buffer alone.
  executor.set_input("x", vector_of({2, 2, 2, 2}));
  EXPECT_NE(executor.get_input(0).data(), x.data());
  EXPECT_EQ(values_of(x), (std::vector<float>{-3, 2, 3, 5}));
  executor.run();
  EXPECT_EQ(values_of(executor.get_output(0)), chain_reference({2, 2, 2, 2}, y));

  // Misaligned memory is refused.
  alignas(64) float buffer[8] = {};
  Tensor misaligned = Tensor::wrap(buffer + 1, {4}, DataType::float32());
  EXPECT_EQ(error_of([&] { executor.set_input_zero_copy("x", misaligned); }),
            "set_input_zero_copy: input 'x' needs data aligned to 64 bytes");
}

TEST(GraphExecutorTest, MissingKernelNamesNodeAndFunction) {
  std::string graph = kChainGraph;
  graph.replace(graph.find("\"func_name\": \"mul\""), 18, "\"func_name\": \"mux\"");
  EXPECT_EQ(error_of([&] { GraphExecutor(graph, test_kernels()); }),
            "graph JSON: node 4 ('mul0') calls 'mux', which neither the kernel library "
            "'test_kernels' nor the global registry has");
}

TEST(GraphExecutorTest, KernelFailureNamesTheNode) {
  std::string graph = kChainGraph;
  graph.replace(graph.find("\"func_name\": \"relu\""), 19, "\"func_name\": \"fail\"");
  GraphExecutor executor(graph, test_kernels());
  EXPECT_EQ(error_of([&] { executor.run(); }),
            "node 3 ('relu0') (kernel 'fail'): the kernel refuses");
}

TEST(GraphExecutorTest, OnlyTheCpuIsSupported) {
  EXPECT_EQ(error_of([&] {
              GraphExecutor(kChainGraph, test_kernels(), Device{DeviceType::CUDA, 0});
            }),
            "the graph executor runs on the CPU only, not on cuda");
}

TEST(GraphExecutorTest, BenchmarkAndProfileTimeTheKernels) {
  std::string graph = kChainGraph;
  graph.replace(graph.find("\"func_name\": \"relu\""), 19, "\"func_name\": \"sleep_2ms\"");
  GraphExecutor executor(graph, test_kernels());
  executor.set_input("x", vector_of({1, 2, 3, 4}));
  executor.set_input("y", vector_of({1, 2, 3, 4}));

  BenchmarkResult bench = executor.benchmark(/*repeat=*/3, /*number=*/2);
  ASSERT_EQ(bench.results_ms.size(), 3u);
  EXPECT_GE(bench.min_ms, 2.0);  // every run sleeps in relu0
  EXPECT_LE(bench.min_ms, bench.median_ms);
  EXPECT_LE(bench.median_ms, bench.max_ms);
  EXPECT_GE(bench.mean_ms, bench.min_ms);
  EXPECT_LE(bench.mean_ms, bench.max_ms);
  EXPECT_GE(bench.std_ms, 0.0);
  EXPECT_TRUE(contains(error_of([&] { executor.benchmark(0, 1); }), "at least 1"));

  std::vector<KernelProfile> rows = executor.profile(/*repeat=*/3);
  ASSERT_EQ(rows.size(), 5u);  // one per kernel node
  EXPECT_EQ(rows[0].node_name, "relu0");
  EXPECT_EQ(rows[0].func_name, "sleep_2ms");
  EXPECT_GE(rows[0].mean_ms, 2.0);
  double percent = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    percent += rows[i].percent;
    if (i > 0) {
      EXPECT_LE(rows[i].mean_ms, rows[i - 1].mean_ms);
    }
  }
  EXPECT_NEAR(percent, 100.0, 1e-6);
}

}  // namespace
}  // namespace anvil
