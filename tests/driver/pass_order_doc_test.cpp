// docs/passes.md holds the one description of the pass order: its table must name the passes
// of driver::pass_names() in the pipeline's order, so that the two cannot drift apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "anvil/driver/build.h"

namespace anvil {
namespace {

// The cells of a Markdown table row, trimmed; empty when the line is no table row.
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> result;
  if (line.empty() || line[0] != '|') return result;
  std::stringstream in(line.substr(1));
  std::string cell;
  while (std::getline(in, cell, '|')) {
    size_t begin = cell.find_first_not_of(' '), end = cell.find_last_not_of(' ');
    result.push_back(begin == std::string::npos ? "" : cell.substr(begin, end - begin + 1));
  }
  return result;
}

// The pass column of the table headed "| # | pass | ...", one entry per run, in order.
std::vector<std::string> documented_runs(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::vector<std::string> runs;
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> row = cells(line);
    if (!in_table) {
      in_table = row.size() >= 2 && row[0] == "#" && row[1] == "pass";
      continue;
    }
    if (row.empty()) break;
    if (row[0].find_first_not_of("-: ") == std::string::npos) continue;  // the rule line
    EXPECT_EQ(row[0], std::to_string(runs.size() + 1)) << "rows are numbered in order: " << line;
    runs.push_back(row.size() >= 2 ? row[1] : "");
  }
  return runs;
}

TEST(PassOrderDoc, TableInPassesMdNamesThePipelinesPassesInOrder) {
  std::vector<std::string> runs =
      documented_runs(std::string(ANVIL_SOURCE_DIR) + "/docs/passes.md");
  ASSERT_FALSE(runs.empty()) << "docs/passes.md has no table headed '| # | pass |'";
  // pass_names() names each pass once, where it first runs.
  std::vector<std::string> names;
  for (const std::string& run : runs)
    if (std::find(names.begin(), names.end(), run) == names.end()) names.push_back(run);
  EXPECT_EQ(names, driver::pass_names());
}

}  // namespace
}  // namespace anvil
