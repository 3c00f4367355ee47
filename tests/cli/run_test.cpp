// anvil run and anvil print-ir on ONNX models: outputs by tvmc's naming, and
// each bad input giving one line naming the culprit.
#include <gtest/gtest.h>

#include "anvil/runtime/npy.h"
#include "cli/cli_fixture.h"

namespace anvil::testing {
namespace {

class CliRun : public CliFixture {
 protected:
  static void SetUpTestSuite() {
    make_scratch_dir(R"(
import numpy as np
a = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
b = np.ones((2, 3), dtype=np.float32)
np.savez(os.path.join(out_dir, 'in.npz'), a=a, b=b)
np.savez(os.path.join(out_dir, 'missing.npz'), a=a)
np.savez(os.path.join(out_dir, 'extra.npz'), a=a, b=b, c=b)
np.savez(os.path.join(out_dir, 'dtype.npz'), a=a.astype(np.float64), b=b)
np.savez(os.path.join(out_dir, 'rank.npz'), a=a.reshape(6), b=b)
np.savez(os.path.join(out_dir, 'dim.npz'), a=np.zeros((2, 4), np.float32), b=b)
)");
  }

  // Runs anvil and checks it failed with exit 1 and one error line containing every word.
  static void expect_error(const std::vector<std::string>& args,
                           const std::vector<std::string>& words) {
    expect_one_line_error(run_anvil(args), 1, words);
  }
};

TEST_F(CliRun, WritesOutputsInModelOrder) {
  std::string out = path("out.npz");
  CommandResult r =
      run_anvil({"run", path("two_outputs.onnx"), "--inputs", path("in.npz"), "--outputs", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  NamedTensors outputs = read_npz(out);
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].first, "output_0");
  EXPECT_EQ(outputs[1].first, "output_1");
  // output_0 = a + b and output_1 = a * b with a = [-2.5 .. 2.5], b = 1.
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_FLOAT_EQ(outputs[0].second.get_as_double(i), i - 2.5 + 1);
    EXPECT_FLOAT_EQ(outputs[1].second.get_as_double(i), i - 2.5);
  }
}

TEST_F(CliRun, FillModeOnes) {
  std::string out = path("ones.npz");
  CommandResult r = run_anvil({"run", path("add_relu.onnx"), "--fill-mode", "ones", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  NamedTensors outputs = read_npz(out);
  EXPECT_FLOAT_EQ(outputs.at(0).second.get_as_double(5), 2.0);
}

TEST_F(CliRun, BadInputsNameTheInput) {
  std::string model = path("add_relu.onnx");
  expect_error({"run", model, "--inputs", path("missing.npz")}, {"'b'", "missing"});
  expect_error({"run", model, "--inputs", path("extra.npz")}, {"'c'", "not an input"});
  expect_error({"run", model, "--inputs", path("dtype.npz")}, {"'a'", "float64", "float32"});
  expect_error({"run", model, "--inputs", path("rank.npz")}, {"'a'", "(6,)", "rank"});
  expect_error({"run", model, "--inputs", path("dim.npz")}, {"'a'", "(2, 4)", "(2, 3)"});
}

TEST_F(CliRun, TwoUnsupportedOpsInOneError) {
  expect_error({"run", path("unsupported.onnx")}, {"FooOp", "BarOp"});
}

TEST_F(CliRun, BadModelFiles) {
  write_file(*dir_ / "empty.onnx", "");
  write_file(*dir_ / "noise.onnx", std::string("\x08\x96\x01\xff\xfe garbage", 14));
  std::string full = read_file(path("add_relu.onnx"));
  write_file(*dir_ / "truncated.onnx", full.substr(0, full.size() / 2));
  CommandResult missing = run_anvil({"run", path("missing.onnx")});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;  // a usage error
  EXPECT_NE(missing.err.find(path("missing.onnx") + "' does not exist"), std::string::npos)
      << missing.err;
  expect_error({"run", dir_->path().string()}, {"directory"});
  expect_error({"run", path("empty.onnx")}, {"empty.onnx", "empty"});
  expect_error({"run", path("tensor.pb")}, {"tensor.pb", "not an ONNX model"});
  CommandResult noise = run_anvil({"run", path("noise.onnx")});
  EXPECT_EQ(noise.exit_code, 1) << noise.err;
  CommandResult truncated = run_anvil({"run", path("truncated.onnx")});
  EXPECT_EQ(truncated.exit_code, 1) << truncated.err;
  EXPECT_EQ(truncated.err.rfind("anvil: error: ", 0), 0u) << truncated.err;
}

TEST_F(CliRun, BadFlagValuesAreUsageErrors) {
  CommandResult r = run_anvil({"run", path("add_relu.onnx"), "--fill-mode", "sometimes"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("sometimes"), std::string::npos) << r.err;
}

TEST_F(CliRun, PrintIrOfAnOnnxModel) {
  CommandResult r = run_anvil({"print-ir", path("add_relu.onnx")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("def @main(%a: Tensor[(2, 3), float32], %b: Tensor[(2, 3), float32])"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("nn.relu("), std::string::npos) << r.out;
}

TEST_F(CliRun, PrintIrOfAWorkload) {
  CommandResult r = run_anvil({"print-ir", "--workload", "mlp"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("nn.dense(%data, %linear0_weight, units=128)"), std::string::npos) << r.out;
  CommandResult bad = run_anvil({"print-ir", "--workload", "resnet19"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("resnet19"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace anvil::testing

namespace anvil::testing {
namespace {

TEST(CliCompile, PackageRunsLikeTheReferenceExecutor) {
  ScratchDir dir;
  write_onnx_fixtures(dir.path());
  run_python(R"(
import numpy as np
a = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
b = np.full((2, 3), 0.5, dtype=np.float32)
np.savez(os.path.join(out_dir, 'in.npz'), a=a, b=b)
)",
             dir.path());
  std::string model = (dir / "two_outputs.onnx").string();
  for (const char* package : {"m.tar", "m.so"}) {
    CommandResult compiled =
        run_anvil({"compile", model, "-O", "2", "-o", (dir / package).string()});
    ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
    std::string out = (dir / (std::string(package) + ".npz")).string();
    std::string ref = (dir / "reference.npz").string();
    CommandResult ran = run_anvil(
        {"run", (dir / package).string(), "--inputs", (dir / "in.npz").string(), "--outputs", out});
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    CommandResult reference = run_anvil({"run", model, "--executor", "reference", "--inputs",
                                         (dir / "in.npz").string(), "--outputs", ref});
    ASSERT_EQ(reference.exit_code, 0) << reference.err;
    NamedTensors got = read_npz(out), want = read_npz(ref);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      for (int64_t j = 0; j < want[i].second.numel(); ++j)
        EXPECT_FLOAT_EQ(got[i].second.get_as_double(j), want[i].second.get_as_double(j));
  }
  // The reference executor cannot run a compiled package, and a bad opt level is a usage error.
  CommandResult refuse = run_anvil({"run", (dir / "m.tar").string(), "--executor", "reference"});
  EXPECT_EQ(refuse.exit_code, 1) << refuse.err;
  EXPECT_NE(refuse.err.find("compiled package"), std::string::npos) << refuse.err;
  CommandResult bad_level = run_anvil({"compile", model, "-O", "7"});
  EXPECT_EQ(bad_level.exit_code, 2) << bad_level.err;
}

TEST(CliCompile, PrintTimeGivesTheSummary) {
  ScratchDir dir;
  write_onnx_fixtures(dir.path());
  CommandResult ran = run_anvil({"run", (dir / "add_relu.onnx").string(), "--fill-mode", "ones",
                                 "--print-time", "--repeat", "3"});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_NE(ran.out.find("Execution time summary"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("median (ms)"), std::string::npos) << ran.out;
}

}  // namespace
}  // namespace anvil::testing
