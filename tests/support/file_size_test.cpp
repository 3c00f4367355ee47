// The house rule that keeps files readable: no source file under src/ past 1000 lines.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

namespace {

// Generated files may be long; they are listed here by name.
const std::set<std::string> kGeneratedFiles = {};

TEST(FileSize, NoSourceFileUnderSrcExceedsLimit) {
  constexpr int kMaxLines = 1000;
  std::filesystem::path src = std::filesystem::path(ANVIL_SOURCE_DIR) / "src";
  ASSERT_TRUE(std::filesystem::is_directory(src)) << src;
  int checked = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(src)) {
    std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
    if (kGeneratedFiles.count(entry.path().filename().string())) continue;
    std::ifstream file(entry.path());
    int lines = 0;
    for (std::string line; std::getline(file, line);) ++lines;
    EXPECT_LE(lines, kMaxLines) << entry.path() << " has " << lines
                                << " lines; split it by concept";
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
