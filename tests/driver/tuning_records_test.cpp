// Tuning records: each bad line is one problem naming its line (or, strict, the error), the best
// record per task is the least mean cost without error on this target, and workload keys
// follow the workload, not the names in it.
#include "anvil/driver/tuning_records.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "anvil/ir/parser.h"
#include "anvil/support/error.h"

namespace anvil::driver {
namespace {

std::string write_records(const std::string& name, const std::string& text) {
  std::filesystem::path path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path.string();
}

std::string record(const std::string& task, const std::string& target, const std::string& knobs,
                   const std::string& costs, int error = 0) {
  return "{\"version\": 1, \"task\": \"" + task +
         "\", \"strategy\": \"x86.dense\", \"target\": \"" + target + "\", \"knobs\": " + knobs +
         ", \"costs_ms\": " + costs + ", \"error\": " + std::to_string(error) + "}\n";
}

TEST(TuningRecords, BadLinesAreProblemsNamingTheirLine) {
  const std::string path = write_records(
      "anvil_records_bad.jsonl",
      record("a", "llvm", "{\"tile_rows\": 2}", "[1.0]") + "# a comment\n\n" + "not json\n" +
          "{\"version\": 2, \"task\": \"a\"}\n" +
          record("a", "llvm", "{\"tile_rows\": \"two\"}", "[1.0]") +
          record("a", "llvm", "{\"tile_rows\": 2}", "[]") + record("a", "llvm", "{}", "[1]", 9));
  TuningRecords records = read_tuning_records(path);
  ASSERT_EQ(records.records.size(), 1u);
  EXPECT_EQ(records.records[0].line, 1);
  ASSERT_EQ(records.problems.size(), 5u);
  const char* expected[] = {"line 4: not JSON", "line 5: 'version' must be 1",
                            "line 6: knob 'tile_rows' must be an integer",
                            "line 7: a record without error needs its 'costs_ms'",
                            "line 8: 'error' must be an error code 0..4"};
  for (size_t i = 0; i < 5; ++i)
    EXPECT_NE(records.problems[i].find(expected[i]), std::string::npos) << records.problems[i];
  try {
    read_tuning_records(path, /*strict=*/true);
    ADD_FAILURE() << "strict reading accepted a bad line";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 4: not JSON"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_tuning_records(path + ".missing"), Error);
}

TEST(TuningRecords, BestIsTheLeastMeanCostWithoutErrorOnThisTarget) {
  const std::string path = write_records(
      "anvil_records_best.jsonl",
      record("a", "llvm", "{\"tile_rows\": 1}", "[2.0, 2.2]") +
          record("a", "llvm", "{\"tile_rows\": 2}", "[1.0, 3.4]") +  // mean 2.2: not better
          record("a", "llvm", "{\"tile_rows\": 4}", "[1.5, 1.7]") +  // mean 1.6: the best
          record("a", "llvm", "{\"tile_rows\": 8}", "[]", 3) +       // timed out
          record("a", "c", "{\"tile_rows\": 3}", "[0.1]") +          // another target
          record("b", "llvm", "{\"vectors\": 2}", "[5.0]"));
  std::vector<std::string> problems;
  std::map<std::string, TuningRecord> best =
      best_records(read_tuning_records(path), "llvm", problems);
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best.at("a").knobs.at("tile_rows"), 4);
  EXPECT_NEAR(best.at("a").mean_ms(), 1.6, 1e-12);
  EXPECT_EQ(best.at("b").knobs.at("vectors"), 2);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "tuning records line 5: target 'c' is not this build's 'llvm'");
}

TEST(TuningRecords, WorkloadKeyFollowsTheWorkload) {
  auto group = [](const std::string& param, int64_t size) {
    ir::IRModule mod =
        ir::parse_module("def @main(%" + param + ": Tensor[(" + std::to_string(size) +
                         ", 8), float32]) { nn.relu(%" + param + ") }");
    return mod.get_function("main");
  };
  EXPECT_EQ(workload_key(group("p0", 4)), workload_key(group("p0", 4)));
  EXPECT_NE(workload_key(group("p0", 4)), workload_key(group("p0", 5)));
  EXPECT_EQ(workload_key(group("p0", 4)).size(), 16u);
}

}  // namespace
}  // namespace anvil::driver
