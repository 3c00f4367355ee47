// The command line's promises to users: every flag in --help is documented in docs/cli.md,
// every subcommand's help has examples, and every bad flag, bad value, missing file, unknown
// target or unparsable shape string is one line naming the culprit with the right exit code.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "cli/cli_fixture.h"

namespace anvil::testing {
namespace {

const std::vector<std::string> kCommands = {"inspect", "print-ir", "compile", "run",
                                            "analyze", "tune",     "demo"};

// The flags a help text lists: the first field of every option line ("-o,--output TEXT").
std::set<std::string> flags_in_help(const std::string& help) {
  std::set<std::string> flags;
  std::istringstream lines(help);
  std::string line;
  while (std::getline(lines, line)) {
    size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos || start == 0 || line[start] != '-') continue;
    std::string field = line.substr(start, line.find(' ', start) - start);
    std::istringstream names(field);
    std::string name;
    while (std::getline(names, name, ','))
      if (name.size() > 1 && name[0] == '-') flags.insert(name);
  }
  return flags;
}

TEST(CliFlags, EveryFlagInHelpIsDocumented) {
  std::string docs = read_file(std::filesystem::path(ANVIL_SOURCE_DIR) / "docs" / "cli.md");
  for (const std::string& command : kCommands) {
    CommandResult r = run_anvil({command, "--help"});
    ASSERT_EQ(r.exit_code, 0) << command << ": " << r.err;
    EXPECT_NE(docs.find("## anvil " + command), std::string::npos)
        << "docs/cli.md has no section for " << command;
    std::set<std::string> flags = flags_in_help(r.out);
    EXPECT_GE(flags.size(), 1u) << command;
    for (const std::string& flag : flags) {
      if (flag == "-h" || flag == "--help") continue;
      EXPECT_NE(docs.find(flag), std::string::npos)
          << "anvil " << command << " " << flag << " is not in docs/cli.md";
    }
  }
}

TEST(CliFlags, EveryCommandHelpHasExamples) {
  for (const std::string& command : kCommands) {
    CommandResult r = run_anvil({command, "--help"});
    ASSERT_EQ(r.exit_code, 0) << command;
    size_t examples = r.out.find("Examples");
    ASSERT_NE(examples, std::string::npos) << command << " help:\n" << r.out;
    // At least two example command lines.
    size_t count = 0;
    for (size_t at = r.out.find("anvil " + command, examples); at != std::string::npos;
         at = r.out.find("anvil " + command, at + 1))
      ++count;
    EXPECT_GE(count, 2u) << command << " help:\n" << r.out;
  }
}

struct BadCase {
  std::vector<std::string> args;
  int exit_code;
  std::vector<std::string> words;  // each must appear in the one error line
};

class CliBadInput : public CliFixture {
 protected:
  static void SetUpTestSuite() {
    make_scratch_dir();
    // Line 1: a record for another target; line 2: not a record.
    write_file(*dir_ / "records.jsonl",
               "{\"version\": 1, \"task\": \"00000000000000aa\", \"strategy\": \"x86.dense\", "
               "\"target\": \"c\", \"knobs\": {\"tile_rows\": 2}, \"costs_ms\": [1.5], "
               "\"error\": 0}\n{\"task\": \"k\", \"knobs\": 3}\n");
  }

  static void expect(const BadCase& c) {
    std::string what;
    for (const std::string& a : c.args) what += a + " ";
    expect_one_line_error(run_anvil(c.args), c.exit_code, c.words, what);
  }
};

TEST_F(CliBadInput, UnknownFlagsAreUsageErrors) {
  for (const char* command : {"compile", "run", "analyze", "print-ir", "inspect", "demo"})
    expect({{command, path("add_relu.onnx"), "--frobnicate"}, 2, {"--frobnicate"}});
}

TEST_F(CliBadInput, BadFlagValuesAreUsageErrors) {
  const std::string model = path("add_relu.onnx");
  expect({{"compile", model, "-O", "7"}, 2, {"7"}});
  expect({{"compile", model, "--desired-layout", "NWHC"}, 2, {"NWHC"}});
  expect({{"compile", model, "--dump-code", "relay,bytecode"}, 2, {"bytecode"}});
  expect({{"compile", model, "--target", "c", "--dump-code", "asm"}, 2, {"asm", "llvm"}});
  expect({{"compile", model, "--disabled-pass", "FoldConstant,FuseAll"}, 2, {"FuseAll"}});
  expect({{"compile", model, "--pass-config", "relay.FuseOps.max_depth"}, 2, {"max_depth"}});
  expect({{"run", model, "--executor", "jit"}, 2, {"jit"}});
  expect({{"run", model, "--device", "gpu"}, 2, {"gpu"}});
  expect({{"run", model, "--fill-mode", "sometimes"}, 2, {"sometimes"}});
  expect({{"run", model, "--repeat", "0"}, 2, {"--repeat"}});
  expect({{"run", model, "--threads", "0"}, 2, {"--threads"}});
  expect({{"run", model, "--print-top", "many"}, 2, {"many"}});
  expect({{"run", model, "--executor", "reference", "--profile"}, 2, {"--profile"}});
  expect({{"print-ir", model, "--stage", "machine-code"}, 2, {"machine-code"}});
}

TEST_F(CliBadInput, UnknownTargetsAreUsageErrorsNamingThem) {
  const std::string model = path("add_relu.onnx");
  expect({{"compile", model, "--target", "cuda"}, 2, {"--target", "cuda"}});
  expect({{"compile", model, "--target", "llvm -mcpu=znver9"}, 2, {"znver9"}});
  expect({{"compile", model, "--target", "llvm -frobnicate"}, 2, {"-frobnicate"}});
  expect({{"print-ir", model, "--stage", "asm", "--target", "llvm -mattr=+nosuchfeature"},
          2,
          {"nosuchfeature"}});
}

TEST_F(CliBadInput, InputShapesThatDoNotParseAreUsageErrors) {
  const std::string model = path("add_relu.onnx");
  for (const char* shapes :
       {"a:[2,x]", "a[2,3]", "a:[2,3", ":[2,3]", "a:[99999999999999]", "a:[2,3] a:[2,3]", " "})
    expect({{"compile", model, "--input-shapes", shapes}, 2, {"--input-shapes"}});
  expect({{"run", model, "--input-shapes", "a:[2;3]"}, 2, {"--input-shapes", "a:[2;3]"}});
}

TEST_F(CliBadInput, MissingFilesAreUsageErrorsNamingTheFile) {
  expect({{"compile", path("nope.onnx")}, 2, {"nope.onnx", "does not exist"}});
  expect({{"run", path("nope.tar")}, 2, {"nope.tar", "does not exist"}});
  expect({{"run", path("add_relu.onnx"), "--inputs", path("nope.npz")},
          2,
          {"--inputs", "nope.npz", "does not exist"}});
  expect({{"print-ir", path("nope.onnx")}, 2, {"nope.onnx", "does not exist"}});
  expect({{"analyze", path("nope.onnx")}, 2, {"nope.onnx", "does not exist"}});
  expect({{"inspect", path("nope.npz")}, 2, {"nope.npz", "does not exist"}});
  expect({{"compile", path("add_relu.onnx"), "--tuning-records", path("nope.jsonl")},
          2,
          {"--tuning-records", "nope.jsonl"}});
  expect({{"compile", path("add_relu.onnx"), "-O", "0", "--cross-compiler", "/nonexistent/cc", "-o",
           path("cross.tar")},
          1,
          {"/nonexistent/cc"}});
}

// With --strict-records a record that cannot be applied is the error, naming its line; without,
// each is a warning naming its line and the build goes on with the default schedules.
TEST_F(CliBadInput, BadTuningRecordNamesItsLine) {
  expect({{"compile", path("add_relu.onnx"), "--tuning-records", path("records.jsonl"),
           "--strict-records", "-o", path("m.tar")},
          1,
          {"records.jsonl", "line 2", "version"}});
  CommandResult r = run_anvil({"compile", path("add_relu.onnx"), "--tuning-records",
                               path("records.jsonl"), "-o", path("m.tar")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: tuning records '" + path("records.jsonl") + "' line 2"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("warning: tuning records line 1: target 'c' is not this build's 'llvm'"),
            std::string::npos)
      << r.err;
}

// The records parser on truncated and random bytes (under the sanitizers too): each file is
// read without a crash, a broken line is a warning naming the records file, and with
// --strict-records the error.
TEST_F(CliBadInput, TruncatedAndRandomTuningRecords) {
  const std::string valid =
      "{\"version\": 1, \"task\": \"00000000000000aa\", \"strategy\": \"x86.dense\", "
      "\"target\": \"llvm\", \"knobs\": {\"tile_rows\": 2}, \"costs_ms\": [1.5, 2e-3], "
      "\"error\": 0, \"timestamp\": 1795000000}";
  std::vector<std::string> contents;
  for (size_t cut : {size_t(1), size_t(9), size_t(30), size_t(61), size_t(90), valid.size() - 1})
    contents.push_back(valid.substr(0, cut) + "\n");
  uint64_t state = 12345;
  for (int file = 0; file < 3; ++file) {
    std::string bytes;
    for (int i = 0; i < 200; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      bytes.push_back(char(state >> 56));
    }
    contents.push_back(bytes);
  }
  for (size_t i = 0; i < contents.size(); ++i) {
    SCOPED_TRACE("file " + std::to_string(i));
    write_file(path("broken.records"), contents[i]);
    CommandResult r = run_anvil({"compile", path("add_relu.onnx"), "--tuning-records",
                                 path("broken.records"), "-o", path("broken.tar")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("warning: tuning records '" + path("broken.records") + "' line"),
              std::string::npos)
        << r.err;
    expect({{"compile", path("add_relu.onnx"), "--tuning-records", path("broken.records"),
             "--strict-records", "-o", path("broken.tar")},
            1,
            {"broken.records", "line"}});
  }
}

TEST_F(CliBadInput, TuneFlagsAreCheckedBeforeTuning) {
  expect({{"tune", path("add_relu.onnx")}, 2, {"give -o/--output FILE"}});
  expect({{"tune"}, 2, {"give either a model file or --workload"}});
  expect({{"tune", path("add_relu.onnx"), "-o", path("t.json"), "--tuner", "annealing"},
          2,
          {"--tuner", "annealing"}});
  expect({{"tune", path("add_relu.onnx"), "-o", path("t.json"), "--target", "c"},
          2,
          {"--target", "llvm target"}});
  expect({{"tune", path("add_relu.onnx"), "-o", path("t.json"), "--prior-records",
           path("missing.json")},
          2,
          {"missing.json"}});
  expect({{"tune", path("add_relu.onnx"), "-o", path("t.json"), "--trials", "0"}, 2, {"--trials"}});
}

// A prior records file with a line that is no record: a warning naming the line, and the
// tuning goes on, its records written.
TEST_F(CliBadInput, TunePriorRecordsWithABadLineWarnAndGoOn) {
  write_file(*dir_ / "prior.json", "not a record\n");
  CommandResult r = run_anvil({"tune", path("add_relu.onnx"), "-o", path("tuned.json"),
                               "--prior-records", path("prior.json"), "--trials", "2", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("prior.json' line 1"), std::string::npos) << r.err;
  const std::string records = read_file(path("tuned.json"));
  EXPECT_EQ(std::count(records.begin(), records.end(), '\n'), 2) << records;
}

// The tasks of a small MLP: its dense layers carry the packed dense schedule's knobs.
TEST_F(CliBadInput, TuneListsTasks) {
  CommandResult r = run_anvil({"tune", "--workload", "mlp", "--list-tasks"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("x86.dense_pack"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tile_rows {"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fused_nn_contrib_dense_pack"), std::string::npos) << r.out;
}

TEST_F(CliBadInput, CorruptModelIsAnErrorNamingIt) {
  write_file(*dir_ / "corrupt.onnx", std::string("\x08\x07garbage\xff\xff", 11));
  expect({{"compile", path("corrupt.onnx")}, 1, {"corrupt.onnx"}});
  expect({{"run", path("corrupt.onnx")}, 1, {"corrupt.onnx"}});
}

TEST_F(CliBadInput, ForcedExecutorMustMatchThePackage) {
  CommandResult compiled =
      run_anvil({"compile", path("add_relu.onnx"), "-O", "0", "-q", "-o", path("p.tar")});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_EQ(compiled.err, "");  // --quiet
  expect({{"run", path("p.tar"), "--executor", "vm"},
          1,
          {"p.tar", "is a graph package", "--executor vm"}});
}

}  // namespace
}  // namespace anvil::testing
