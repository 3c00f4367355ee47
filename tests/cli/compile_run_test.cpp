// anvil compile and anvil run doing their jobs: code dumps, tvmc's time summary, top-N,
// per-kernel profiles, layouts, and the VM, each checked against an independent oracle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>

#include "anvil/runtime/npy.h"
#include "anvil/runtime/package.h"
#include "cli/cli_fixture.h"
#include "support/graph_memory_oracle.h"

namespace anvil::testing {
namespace {

class CliCompileRun : public CliFixture {
 protected:
  static void SetUpTestSuite() {
    make_scratch_dir(R"(
import numpy as np
from onnx import helper, TensorProto
import onnx
rng = np.random.default_rng(0)
a = rng.standard_normal((2, 3)).astype(np.float32)
b = rng.standard_normal((2, 3)).astype(np.float32)
np.savez(os.path.join(out_dir, 'in.npz'), a=a, b=b)
# conv -> relu -> max pool -> conv + residual -> global average pool: every op ConvertLayout
# moves to another layout.
w1 = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
b1 = rng.standard_normal((8,)).astype(np.float32)
w2 = rng.standard_normal((8, 8, 3, 3)).astype(np.float32)
nodes = [
    helper.make_node('Conv', ['x', 'w1', 'b1'], ['c1'], pads=[1, 1, 1, 1]),
    helper.make_node('Relu', ['c1'], ['r1']),
    helper.make_node('MaxPool', ['r1'], ['p1'], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node('Conv', ['p1', 'w2'], ['c2'], pads=[1, 1, 1, 1]),
    helper.make_node('Add', ['c2', 'p1'], ['s']),
    helper.make_node('GlobalAveragePool', ['s'], ['y']),
]
graph = helper.make_graph(
    nodes, 'convnet',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 3, 10, 12])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 8, 1, 1])],
    [onnx.numpy_helper.from_array(w1, 'w1'), onnx.numpy_helper.from_array(b1, 'b1'),
     onnx.numpy_helper.from_array(w2, 'w2')])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)])
model.ir_version = 8  # readable by the pinned ONNX Runtime
onnx.save(model, os.path.join(out_dir, 'convnet.onnx'))
np.savez(os.path.join(out_dir, 'conv_in.npz'),
         x=rng.standard_normal((1, 3, 10, 12)).astype(np.float32))
)");
  }
};

void expect_close(const NamedTensors& got, const NamedTensors& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].second.numel(), want[i].second.numel());
    for (int64_t j = 0; j < want[i].second.numel(); ++j)
      EXPECT_NEAR(got[i].second.get_as_double(j), want[i].second.get_as_double(j),
                  tol * (1 + std::abs(want[i].second.get_as_double(j))))
          << got[i].first << "[" << j << "]";
  }
}

TEST_F(CliCompileRun, DumpCodeWritesEachStageBesideThePackage) {
  std::string package = path("dumped.tar");
  CommandResult r = run_anvil({"compile", path("add_relu.onnx"), "-o", package, "--dump-code",
                               "relay,tir,ll,asm", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::string relay = read_file(package + ".relay"), tir = read_file(package + ".tir"),
              ll = read_file(package + ".ll"), assembly = read_file(package + ".s");
  EXPECT_NE(relay.find("def @main"), std::string::npos) << relay;
  EXPECT_NE(relay.find("Primitive"), std::string::npos) << relay;  // fused by FuseOps
  EXPECT_NE(tir.find("T.prim_func"), std::string::npos) << tir;
  EXPECT_NE(ll.find("define "), std::string::npos);
  EXPECT_NE(assembly.find(".text"), std::string::npos);
  CommandResult c = run_anvil({"compile", path("add_relu.onnx"), "--target", "c", "-o",
                               path("c.tar"), "--dump-code", "c", "-q", "--cross-compiler", "gcc"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(read_file(path("c.tar") + ".c").find("#include"), std::string::npos);
}

// On a terminal (script(1) provides one) compile draws a progress bar; through a pipe it prints
// only the summary line.
TEST_F(CliCompileRun, ProgressBarOnlyOnATerminal) {
  std::string command = std::string(ANVIL_BINARY) + " compile " + path("convnet.onnx") + " -o " +
                        path("progress.tar");
  CommandResult tty = run_command({"/usr/bin/script", "-qec", command, "/dev/null"});
  ASSERT_EQ(tty.exit_code, 0) << tty.out << tty.err;
  EXPECT_NE(tty.out.find("lowering kernels"), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find("] 1/"), std::string::npos) << tty.out;
  CommandResult piped = run_anvil({"compile", path("convnet.onnx"), "-o", path("progress.tar")});
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.err.find("lowering kernels"), std::string::npos) << piped.err;
  EXPECT_EQ(piped.err.rfind("compiled ", 0), 0u) << piped.err;
}

TEST_F(CliCompileRun, JsonSummaryAndDisabledPasses) {
  CommandResult r = run_anvil({"compile", path("add_relu.onnx"), "-o", path("j.tar"), "--json",
                               "--disabled-pass", "FoldConstant,AlterOpLayout", "--pass-config",
                               "relay.FuseOps.max_depth=1", "--print-pass-times"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("{", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\"output\":\"" + path("j.tar") + "\""), std::string::npos) << r.out;
  // The pass times list what ran: the disabled passes are not among them.
  EXPECT_NE(r.err.find("FuseOps"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("AlterOpLayout"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("FoldConstant"), std::string::npos) << r.err;
}

// Winograd's off switch: ResNet-18 at -O3 takes Winograd for its 3x3 stride-1 layers on 56x56 to
// 14x14 maps; with --disabled-pass WinogradConv2D every convolution stays direct.
TEST_F(CliCompileRun, DisabledPassWinogradConv2DKeepsConvolutionsDirect) {
  auto fused_graph = [](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"compile",       "--workload", "resnet18",     "-o",
                                     path("r18.tar"), "-q",         "--dump-after", "FuseOps"};
    args.insert(args.end(), extra.begin(), extra.end());
    CommandResult r = run_anvil(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.err;
  };
  const std::string on = fused_graph({});
  EXPECT_NE(on.find("nn.contrib_conv2d_winograd_NCHWc("), std::string::npos);
  const std::string off = fused_graph({"--disabled-pass", "WinogradConv2D"});
  EXPECT_EQ(off.find("winograd"), std::string::npos);
  EXPECT_NE(off.find("nn.contrib_conv2d_NCHWc("), std::string::npos);
}

TEST_F(CliCompileRun, PrintTimeIsTvmcsBlock) {
  CommandResult r = run_anvil({"run", path("add_relu.onnx"), "--fill-mode", "ones", "--print-time",
                               "--repeat", "4", "--number", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::regex block(
      "Execution time summary:\n"
      " mean \\(ms\\)   median \\(ms\\)    max \\(ms\\)     min \\(ms\\)     std \\(ms\\)  \n"
      "( {1,4}[0-9]+\\.[0-9]{4} {1,4} ){4} {1,4}[0-9]+\\.[0-9]{4} {1,4}\n");
  EXPECT_TRUE(std::regex_search(r.out, block)) << r.out;
}

TEST_F(CliCompileRun, PrintTopMatchesASortOfTheOutput) {
  std::string out = path("top.npz");
  CommandResult r = run_anvil({"run", path("two_outputs.onnx"), "--inputs", path("in.npz"),
                               "--outputs", out, "--print-top", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The oracle: a + b from the inputs, sorted here.
  NamedTensors in = read_npz(path("in.npz"));
  std::vector<double> sums(6);
  for (int64_t i = 0; i < 6; ++i)
    sums[size_t(i)] = in[0].second.get_as_double(i) + in[1].second.get_as_double(i);
  std::vector<int> order(6);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int x, int y) { return sums[x] > sums[y]; });
  std::string expected = "Top 4 of output_0:\n";
  size_t at = r.out.find(expected);
  ASSERT_NE(at, std::string::npos) << r.out;
  std::istringstream rows(r.out.substr(at + expected.size()));
  std::string header;
  std::getline(rows, header);
  for (int rank = 1; rank <= 4; ++rank) {
    int got_rank = 0, index = -1;
    double score = 0;
    rows >> got_rank >> index >> score;
    EXPECT_EQ(got_rank, rank);
    EXPECT_EQ(index, order[size_t(rank - 1)]) << r.out;
    EXPECT_NEAR(score, sums[size_t(order[size_t(rank - 1)])], 1e-5);
  }
  // The outputs file is still written.
  EXPECT_EQ(read_npz(out).size(), 2u);
}

TEST_F(CliCompileRun, DesiredLayoutKeepsResults) {
  std::string ref = path("conv_ref.npz");
  CommandResult reference = run_anvil({"run", path("convnet.onnx"), "--executor", "reference",
                                       "--inputs", path("conv_in.npz"), "--outputs", ref});
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  for (const char* layout : {"NHWC", "NCHW"}) {
    for (const char* level : {"0", "3"}) {
      std::string package = path(std::string("conv_") + layout + level + ".tar");
      CommandResult compiled =
          run_anvil({"compile", path("convnet.onnx"), "--desired-layout", layout, "-O", level, "-o",
                     package, "-q", "--dump-code", "relay"});
      ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
      if (std::string(layout) == "NHWC") {
        EXPECT_NE(read_file(package + ".relay").find("data_layout=\"NHWC\""), std::string::npos);
      }
      std::string out = package + ".npz";
      CommandResult ran =
          run_anvil({"run", package, "--inputs", path("conv_in.npz"), "--outputs", out});
      ASSERT_EQ(ran.exit_code, 0) << ran.err;
      expect_close(read_npz(out), read_npz(ref), 1e-4);
    }
  }
}

TEST_F(CliCompileRun, ProfileListsKernelsWithFusedOpsAndSumsToTheRun) {
  std::string package = path("resnet.tar");
  CommandResult compiled = run_anvil({"compile", "--workload", "resnet18", "-o", package, "-q"});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  // 30 turns, so that one stall of a shared machine during a kernel's timing weighs little on
  // the means that the sum compares; a second profile when the first misses, since a test
  // running beside this one can still take a core for a whole stretch of one of the two
  // timings (the kernels' sum and the runs are timed apart).
  CommandResult r;
  std::smatch m;
  double kernels = 0, run = 1;
  for (int attempt = 0; attempt < 2; ++attempt) {
    r = run_anvil({"run", package, "--profile", "--repeat", "30"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::regex total("kernels: ([0-9.]+) ms of a ([0-9.]+) ms run");
    ASSERT_TRUE(std::regex_search(r.out, m, total)) << r.out;
    kernels = std::stod(m[1]);
    run = std::stod(m[2]);
    if (std::fabs(kernels / run - 1.0) <= 0.10) break;
  }
  EXPECT_NE(r.out.find("fused ops"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GFLOP/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nn.contrib_conv2d_NCHWc"), std::string::npos) << r.out;
  EXPECT_NEAR(kernels / run, 1.0, 0.10) << r.out;
  // Rows are sorted by time, slowest first, and the convolutions report their GFLOP/s.
  std::regex row("\\n(\\S+) +.*? +([0-9]+\\.[0-9]{4}) +[0-9.]+% +([0-9.]+|-)");
  double previous = 1e300;
  int rows = 0, with_gflops = 0;
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), row);
       it != std::sregex_iterator(); ++it) {
    double ms = std::stod((*it)[2]);
    EXPECT_LE(ms, previous) << r.out;
    previous = ms;
    ++rows;
    with_gflops += (*it)[3] != "-";
  }
  EXPECT_GE(rows, 10) << r.out;
  EXPECT_GE(with_gflops, 10) << r.out;
  // Each rate as a share of the machine's measured FP32 peak on the run's threads, which the
  // table states; no kernel runs above it by more than the peak's own measurement noise. A
  // Winograd kernel's rate counts the direct convolution's multiply-adds, and F(4x4, 3x3) does
  // a quarter of them (36 multiplies per 4x4 tile instead of 144): its share may reach four
  // times the bound.
  std::regex peak("\npeak: ([0-9.]+) GFLOP/s \\(FP32, measured on [0-9]+ threads\\)\n");
  ASSERT_TRUE(std::regex_search(r.out, m, peak)) << r.out;
  EXPECT_GT(std::stod(m[1]), 0) << r.out;
  std::regex share("\n(\\S+) [^\n]* ([0-9.]+)% +(fp32|bf16|int8)(?=\n)");
  int shares = 0;
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), share);
       it != std::sregex_iterator(); ++it) {
    const bool winograd = (*it)[1].str().find("winograd") != std::string::npos;
    EXPECT_LE(std::stod((*it)[2]), winograd ? 4 * 150.0 : 150.0) << (*it)[1] << "\n" << r.out;
    ++shares;
  }
  EXPECT_GE(shares, 10) << r.out;
  // Then each kernel's schedule strategy: the convolutions' is the x86 one.
  size_t schedules = r.out.find("\nschedules:\n");
  ASSERT_NE(schedules, std::string::npos) << r.out;
  std::regex conv_schedule("\n  fused_nn_contrib_conv2d_NCHWc\\S* +x86\\.conv2d_nchwc\n");
  EXPECT_TRUE(std::regex_search(r.out.substr(schedules), conv_schedule)) << r.out;
  // Last, what the storage plan holds, as the package's graph JSON says.
  std::regex memory(
      "\nmemory: activations ([0-9.]+) MiB planned, largest live set ([0-9.]+) MiB "
      "\\(([0-9.]+)x\\), params ([0-9.]+) MiB, inputs and outputs ([0-9.]+) KiB\n");
  ASSERT_TRUE(std::regex_search(r.out, m, memory)) << r.out;
  GraphMemoryFigures figures =
      graph_memory_figures(nlohmann::json::parse(load_module(package).graph_json));
  EXPECT_EQ(figures.problem, "");
  const double mib = 1024.0 * 1024.0;
  EXPECT_NEAR(std::stod(m[1]), double(figures.arena_bytes) / mib, 0.05) << r.out;
  EXPECT_NEAR(std::stod(m[2]), double(figures.largest_live_set) / mib, 0.05) << r.out;
  double ratio = double(figures.arena_bytes) / double(figures.largest_live_set);
  EXPECT_NEAR(std::stod(m[3]), ratio, 0.006) << r.out;
  EXPECT_LE(ratio, 1.2);
  // The input (1, 3, 224, 224) and the 1000 logits, float32.
  EXPECT_EQ(m[5], "591.9") << r.out;
}

// The tasks anvil tune lists are what --tuning-records applies: a record for each blocked
// convolution with knobs of its space changes their schedules, the tuned package computes what
// the reference does, and a record of a task the model lacks is a warning naming its line.
TEST_F(CliCompileRun, TuningRecordsApplyToTheTasksTuneLists) {
  CommandResult tasks = run_anvil({"tune", path("convnet.onnx"), "--list-tasks"});
  ASSERT_EQ(tasks.exit_code, 0) << tasks.err;
  std::string records;
  std::istringstream lines(tasks.out);
  std::string line;
  int convolutions = 0;
  while (std::getline(lines, line)) {
    if (line.find("x86.conv2d_nchwc") == std::string::npos) continue;
    std::istringstream fields(line);
    std::string index, key;
    fields >> index >> key;
    records += "{\"version\": 1, \"task\": \"" + key +
               "\", \"strategy\": \"x86.conv2d_nchwc\", \"target\": \"llvm\", \"knobs\": "
               "{\"oc_tile\": 1, \"ow_block\": 2, \"ic_unroll\": 1}, \"costs_ms\": [0.5], "
               "\"error\": 0}\n";
    ++convolutions;
  }
  ASSERT_EQ(convolutions, 2) << tasks.out;
  records +=
      "{\"version\": 1, \"task\": \"00000000000000ff\", \"strategy\": \"x86.dense\", "
      "\"target\": \"llvm\", \"knobs\": {\"tile_rows\": 2}, \"costs_ms\": [0.5], \"error\": 0}\n";
  write_file(path("convnet.records"), records);
  CommandResult tuned = run_anvil({"compile", path("convnet.onnx"), "--tuning-records",
                                   path("convnet.records"), "-o", path("tuned.tar")});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  EXPECT_NE(
      tuned.err.find(
          "to 2 kernels, kept the default schedule of 0 that measured fastest (3 records read)"),
      std::string::npos)
      << tuned.err;
  EXPECT_NE(tuned.err.find("line 3: task 00000000000000ff is not a task of this model"),
            std::string::npos)
      << tuned.err;
  CommandResult run = run_anvil(
      {"run", path("tuned.tar"), "--inputs", path("conv_in.npz"), "--outputs", path("tuned.npz")});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  CommandResult reference =
      run_anvil({"run", path("convnet.onnx"), "--executor", "reference", "--inputs",
                 path("conv_in.npz"), "--outputs", path("tuned_ref.npz")});
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  expect_close(read_npz(path("tuned.npz")), read_npz(path("tuned_ref.npz")), 1e-4);
}

// tvmc's tutorials write long flags by unambiguous prefix (argparse takes them): `tvmc run
// --inputs imagenet_cat.npz --output predictions.npz resnet50-v2-7-tvm.tar`, with `--output`
// for `--outputs` and the package last. The same line, with anvil in place of tvmc.
TEST_F(CliCompileRun, TutorialCommandLinesWithFlagPrefixes) {
  CommandResult compiled = run_anvil({"compile", path("convnet.onnx"), "--output",
                                      path("tutorial.tar"), "--opt", "3", "--tar", "llvm"});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  CommandResult run = run_anvil({"run", "--inputs", path("conv_in.npz"), "--output",
                                 path("predictions.npz"), path("tutorial.tar")});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  CommandResult reference =
      run_anvil({"run", path("convnet.onnx"), "--executor", "reference", "--inputs",
                 path("conv_in.npz"), "--outputs", path("predictions_ref.npz")});
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  expect_close(read_npz(path("predictions.npz")), read_npz(path("predictions_ref.npz")), 1e-4);
  // A prefix of several flags is a usage error naming them; anvil's own flags take prefixes too.
  CommandResult ambiguous = run_anvil({"run", path("tutorial.tar"), "--pr"});
  EXPECT_EQ(ambiguous.exit_code, 2);
  EXPECT_NE(ambiguous.err.find("--pr: is a prefix of several flags (--print-time, --print-top, "
                               "--profile)"),
            std::string::npos)
      << ambiguous.err;
  CommandResult version = run_anvil({"--vers"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_NE(version.out.find("anvil "), std::string::npos) << version.out;
}

// tvmc's tutorial workflow with anvil in place of tvmc: tune, compile with the records, run.
// The tuned package computes what the untuned one does; the records file holds one line per
// measurement, each naming a task of the model; resuming measures nothing twice.
TEST_F(CliCompileRun, TutorialTuneCompileRunWorkflow) {
  const std::string model = path("convnet.onnx"), records = path("records.json");
  CommandResult tuned = run_anvil({"tune", model, "-o", records, "--trials", "40"});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  EXPECT_NE(tuned.out.find("Current/Best:"), std::string::npos) << tuned.out;
  EXPECT_NE(tuned.out.find("speed-up"), std::string::npos) << tuned.out;
  CommandResult compiled =
      run_anvil({"compile", model, "--tuning-records", records, "-o", path("tuned.tar")});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_EQ(compiled.err.find("warning"), std::string::npos) << compiled.err;
  CommandResult run =
      run_anvil({"run", path("tuned.tar"), "--inputs", path("conv_in.npz"), "--outputs",
                 path("tuned_out.npz"), "--print-time", "--repeat", "20"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("Execution time summary"), std::string::npos) << run.out;
  ASSERT_EQ(run_anvil({"compile", model, "-o", path("untuned.tar")}).exit_code, 0);
  ASSERT_EQ(run_anvil({"run", path("untuned.tar"), "--inputs", path("conv_in.npz"), "--outputs",
                       path("untuned_out.npz")})
                .exit_code,
            0);
  expect_close(read_npz(path("tuned_out.npz")), read_npz(path("untuned_out.npz")), 1e-4);

  // Every line is a record of a task that --list-tasks prints.
  CommandResult listed = run_anvil({"tune", model, "--list-tasks"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  std::set<std::string> measured;
  std::istringstream lines(read_file(records));
  int count = 0;
  for (std::string line; std::getline(lines, line);) {
    ++count;
    nlohmann::json record = nlohmann::json::parse(line);
    const std::string task = record.at("task");
    EXPECT_NE(listed.out.find(task), std::string::npos) << line;
    EXPECT_EQ(record.at("version"), 1);
    EXPECT_EQ(record.at("target"), "llvm");
    measured.insert(task + record.at("knobs").dump());
  }
  EXPECT_GE(count, 2);
  EXPECT_LE(count, 40);
  EXPECT_EQ(size_t(count), measured.size()) << "a config measured twice";

  // tvmc's own spelling, resuming from the records: new lines only for new configs.
  CommandResult resumed = run_anvil({"tune", "--target", "llvm", "--output", records,
                                     "--prior-records", records, "--trials", "8", model, "-q"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(resumed.out, "");
  std::istringstream all(read_file(records));
  int total = 0;
  for (std::string line; std::getline(all, line);) {
    nlohmann::json record = nlohmann::json::parse(line);
    ++total;
    if (total <= count) continue;
    EXPECT_TRUE(
        measured.insert(record.at("task").get<std::string>() + record.at("knobs").dump()).second)
        << "measured again: " << line;
  }
  EXPECT_GE(total, count);
}

TEST_F(CliCompileRun, ThreadsFlagRunsOnOneThread) {
  CommandResult r = run_anvil({"run", path("convnet.onnx"), "--inputs", path("conv_in.npz"),
                               "--threads", "1", "--outputs", path("t1.npz")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  CommandResult reference =
      run_anvil({"run", path("convnet.onnx"), "--executor", "reference", "--inputs",
                 path("conv_in.npz"), "--outputs", path("t1_ref.npz")});
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  expect_close(read_npz(path("t1.npz")), read_npz(path("t1_ref.npz")), 1e-4);
}

TEST_F(CliCompileRun, VmExecutorMatchesTheReference) {
  std::string out = path("vm.npz"), ref = path("vm_ref.npz");
  CommandResult r = run_anvil({"run", path("convnet.onnx"), "--executor", "vm", "--inputs",
                               path("conv_in.npz"), "--outputs", out, "--print-time"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Execution time summary"), std::string::npos) << r.out;
  CommandResult reference = run_anvil({"run", path("convnet.onnx"), "--executor", "reference",
                                       "--inputs", path("conv_in.npz"), "--outputs", ref});
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  expect_close(read_npz(out), read_npz(ref), 1e-4);
}

TEST_F(CliCompileRun, PrintIrStages) {
  CommandResult optimized =
      run_anvil({"print-ir", path("add_relu.onnx"), "--stage", "optimized", "-O", "3"});
  ASSERT_EQ(optimized.exit_code, 0) << optimized.err;
  EXPECT_NE(optimized.out.find("Primitive"), std::string::npos) << optimized.out;
  CommandResult tir = run_anvil({"print-ir", "--workload", "mlp", "--stage", "tir"});
  ASSERT_EQ(tir.exit_code, 0) << tir.err;
  EXPECT_NE(tir.out.find("T.prim_func"), std::string::npos);
  CommandResult ll = run_anvil({"print-ir", "--workload", "mlp", "--stage", "ll", "-O", "1"});
  ASSERT_EQ(ll.exit_code, 0) << ll.err;
  EXPECT_NE(ll.out.find("define "), std::string::npos);
  CommandResult assembly = run_anvil({"print-ir", "--workload", "mlp", "--stage", "asm"});
  ASSERT_EQ(assembly.exit_code, 0) << assembly.err;
  EXPECT_NE(assembly.out.find(".text"), std::string::npos);
}

}  // namespace
}  // namespace anvil::testing
