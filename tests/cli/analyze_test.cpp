// anvil analyze: totals of small models counted by hand, both output formats, the time floor,
// and each bad input giving one line naming the culprit.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "anvil/runtime/package.h"
#include "cli/cli_fixture.h"
#include "support/graph_memory_oracle.h"

namespace anvil::testing {
namespace {

class CliAnalyze : public CliFixture {
 protected:
  static void SetUpTestSuite() {
    // conv_gemm: x (1, 3, 8, 8) -> Conv(W (4, 3, 3, 3), B (4), pads 1) -> Relu -> Flatten ->
    // Gemm(W2 (10, 256) transposed, B2 (10)).
    make_scratch_dir(R"(
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
rng = np.random.default_rng(0)
inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
         for n, s in [('W', (4, 3, 3, 3)), ('B', (4,)), ('W2', (10, 256)), ('B2', (10,))]]
nodes = [helper.make_node('Conv', ['x', 'W', 'B'], ['c'], name='conv0', pads=[1, 1, 1, 1]),
         helper.make_node('Relu', ['c'], ['r'], name='relu0'),
         helper.make_node('Flatten', ['r'], ['f'], name='flatten0'),
         helper.make_node('Gemm', ['f', 'W2', 'B2'], ['y'], name='fc0', transB=1)]
graph = helper.make_graph(nodes, 'conv_gemm',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 3, 8, 8])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 10])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)])
model.ir_version = 8  # readable by the pinned ONNX Runtime
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out_dir, 'conv_gemm.onnx'))
# relu(x) * 2 with a dynamic batch: only the VM runs it, unless --input-shapes fixes the batch.
two = numpy_helper.from_array(np.array([2.0], dtype=np.float32), 'two')
graph = helper.make_graph(
    [helper.make_node('Relu', ['x'], ['r']), helper.make_node('Mul', ['r', 'two'], ['y'])],
    'dynamic', [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['N', 16])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, ['N', 16])], [two])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)]),
          os.path.join(out_dir, 'dynamic.onnx'))
)");
  }

  // Runs anvil and checks it failed with the exit code, one error line containing every word
  // and nothing on stdout.
  static void expect_error(const std::vector<std::string>& args, int exit_code,
                           const std::vector<std::string>& words) {
    CommandResult r = run_anvil(args);
    expect_one_line_error(r, exit_code, words);
    EXPECT_TRUE(r.out.empty()) << r.out;
  }

  static nlohmann::json analyze_json(const std::vector<std::string>& args) {
    std::vector<std::string> full = {"analyze", "--format", "json"};
    full.insert(full.end(), args.begin(), args.end());
    CommandResult r = run_anvil(full);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }
};

TEST_F(CliAnalyze, ConvAndGemmCountedByHand) {
  nlohmann::json j = analyze_json({path("conv_gemm.onnx")});
  // Conv: (1, 4, 8, 8) outputs x 3 x 3 x 3 taps; Gemm: 10 outputs x 256.
  const int64_t conv_macs = 4 * 8 * 8 * 27, fc_macs = 10 * 256;
  EXPECT_EQ(j["total_macs"].get<int64_t>(), conv_macs + fc_macs);
  EXPECT_EQ(j["total_params"].get<int64_t>(), 4 * 27 + 4 + 10 * 256 + 10);
  // Twice the MACs, plus the conv bias and the relu per conv output, plus the Gemm bias.
  EXPECT_EQ(j["total_flops"].get<int64_t>(), 2 * (conv_macs + fc_macs) + 256 + 256 + 10);
  ASSERT_TRUE(j["layers"].is_array());
  ASSERT_FALSE(j["layers"].empty());
  const nlohmann::json& first = j["layers"][0];
  EXPECT_EQ(first["op"], "nn.conv2d");
  EXPECT_EQ(first["output_shape"], nlohmann::json::array({1, 4, 8, 8}));
  EXPECT_EQ(first["macs"].get<int64_t>(), conv_macs);
  EXPECT_EQ(first["flops"].get<int64_t>(), 2 * conv_macs);
  EXPECT_EQ(first["params"].get<int64_t>(), 4 * 27);
  EXPECT_EQ(first["activation_bytes"].get<int64_t>(), 256 * 4);
  for (const char* key :
       {"name", "op", "output_shape", "params", "macs", "flops", "activation_bytes"})
    EXPECT_TRUE(first.contains(key)) << key;
  // The layers add up to the totals (no weight is shared here).
  int64_t macs = 0, flops = 0, params = 0, bytes = 0;
  for (const nlohmann::json& layer : j["layers"]) {
    macs += layer["macs"].get<int64_t>();
    flops += layer["flops"].get<int64_t>();
    params += layer["params"].get<int64_t>();
    bytes += layer["activation_bytes"].get<int64_t>();
  }
  EXPECT_EQ(macs, j["total_macs"].get<int64_t>());
  EXPECT_EQ(flops, j["total_flops"].get<int64_t>());
  EXPECT_EQ(params, j["total_params"].get<int64_t>());
  EXPECT_EQ(bytes, j["total_activation_bytes"].get<int64_t>());
}

// The memory plan is the one `anvil compile` puts in the package: the figures analyze reports
// are read back from the package's graph JSON alone.
TEST_F(CliAnalyze, MemoryPlanIsTheCompiledGraphs) {
  nlohmann::json j = analyze_json({path("conv_gemm.onnx")});
  ASSERT_TRUE(j.contains("memory_plan")) << j;
  const nlohmann::json& plan = j["memory_plan"];
  CommandResult compiled =
      run_anvil({"compile", path("conv_gemm.onnx"), "-o", path("conv_gemm.tar"), "-q"});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  GraphMemoryFigures figures =
      graph_memory_figures(nlohmann::json::parse(load_module(path("conv_gemm.tar")).graph_json));
  EXPECT_EQ(figures.problem, "");
  EXPECT_GT(figures.largest_live_set, 0);
  EXPECT_EQ(plan["activation_bytes"].get<int64_t>(), figures.arena_bytes);
  EXPECT_EQ(plan["largest_live_set_bytes"].get<int64_t>(), figures.largest_live_set);
  EXPECT_EQ(plan["param_bytes"].get<int64_t>() + plan["io_bytes"].get<int64_t>(),
            figures.fixed_bytes);
  // The input (1, 3, 8, 8) and the output (1, 10), float32.
  EXPECT_EQ(plan["io_bytes"].get<int64_t>(), 4 * (3 * 8 * 8 + 10));

  CommandResult table = run_anvil({"analyze", path("conv_gemm.onnx")});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("\nmemory: activations "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(" planned, largest live set "), std::string::npos) << table.out;
}

// A model only the VM runs has no graph executor plan: analyze still reports its costs and
// says why; fixing the dynamic dim gives a plan.
TEST_F(CliAnalyze, DynamicModelHasNoPlanUntilItsShapesAreFixed) {
  nlohmann::json j = analyze_json({path("dynamic.onnx")});
  ASSERT_TRUE(j["memory_plan"].contains("error")) << j;
  EXPECT_NE(j["memory_plan"]["error"].get<std::string>().find("symbolic shape"), std::string::npos)
      << j;
  CommandResult table = run_anvil({"analyze", path("dynamic.onnx")});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("memory: no graph executor plan ("), std::string::npos) << table.out;

  nlohmann::json fixed = analyze_json({path("dynamic.onnx"), "--input-shapes", "x:[4,16]"});
  ASSERT_TRUE(fixed["memory_plan"].contains("activation_bytes")) << fixed;
  EXPECT_EQ(fixed["memory_plan"]["io_bytes"].get<int64_t>(), 2 * 4 * 16 * 4);
}

TEST_F(CliAnalyze, TableHasOneRowPerLayerAndATotalsLine) {
  CommandResult r = run_anvil({"analyze", path("add_relu.onnx")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("activation bytes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("add"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nn.relu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(2, 3)"), std::string::npos) << r.out;
  // y = relu(a + b) on (2, 3): 6 + 6 FLOPs, two float32 outputs of 24 bytes.
  EXPECT_NE(r.out.find("total: 2 layers, 0 params, 0 MACs, 12 FLOPs, 48 B of activations"),
            std::string::npos)
      << r.out;
}

TEST_F(CliAnalyze, BuiltInWorkload) {
  // The MLP: dense 784 -> 128 with bias, relu, dense 128 -> 10 with bias.
  nlohmann::json j = analyze_json({"--workload", "mlp"});
  EXPECT_EQ(j["total_macs"].get<int64_t>(), 784 * 128 + 128 * 10);
  EXPECT_EQ(j["total_params"].get<int64_t>(), 784 * 128 + 128 + 128 * 10 + 10);
  nlohmann::json batched = analyze_json({"--workload", "mlp", "--batch", "4"});
  EXPECT_EQ(batched["total_macs"].get<int64_t>(), 4 * (784 * 128 + 128 * 10));
}

TEST_F(CliAnalyze, TargetPrintsPeakAndFloor) {
  CommandResult r =
      run_anvil({"analyze", "--workload", "mlp", "--target", "llvm", "--threads", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("GFLOP/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ms at peak"), std::string::npos) << r.out;
  nlohmann::json j = analyze_json({"--workload", "mlp", "--target", "c", "--threads", "1"});
  ASSERT_TRUE(j.contains("peak_gflops"));
  const double peak = j["peak_gflops"].get<double>();
  EXPECT_GT(peak, 0.1);
  // The floor is the FLOPs at the peak rate.
  EXPECT_NEAR(j["floor_ms"].get<double>(), j["total_flops"].get<double>() / peak / 1e6,
              1e-6 + 1e-3 * j["floor_ms"].get<double>());
}

TEST_F(CliAnalyze, MissingFileNamesIt) {
  expect_error({"analyze", path("nope.onnx")}, 2, {"nope.onnx", "does not exist"});
}

TEST_F(CliAnalyze, BadFormatIsAUsageError) {
  expect_error({"analyze", path("add_relu.onnx"), "--format", "xml"}, 2, {"--format", "xml"});
}

TEST_F(CliAnalyze, UnknownTargetIsAUsageErrorNamingIt) {
  expect_error({"analyze", path("add_relu.onnx"), "--target", "cuda"}, 2, {"--target", "cuda"});
  expect_error({"analyze", path("add_relu.onnx"), "--target", "llvm -mcpu=nosuchcpu"}, 2,
               {"nosuchcpu"});
}

TEST_F(CliAnalyze, ModelOrWorkloadIsRequired) {
  expect_error({"analyze"}, 2, {"--workload"});
  expect_error({"analyze", path("add_relu.onnx"), "--workload", "mlp"}, 2, {"--workload"});
  expect_error({"analyze", "--workload", "alexnet"}, 1, {"alexnet"});
}

TEST_F(CliAnalyze, BadThreadCountIsAUsageError) {
  expect_error({"analyze", "--workload", "mlp", "--target", "llvm", "--threads", "0"}, 2,
               {"--threads"});
}

}  // namespace
}  // namespace anvil::testing
