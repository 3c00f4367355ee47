// The module boundaries of src/: a module (the first folder under src/) reaches another one
// only through its public headers in include/anvil/. Private headers of a module stay inside
// it, so that a module can change them without breaking the others; the CLI (tools/) and the
// Python bindings (python/src/) are clients like any other and see only the public API.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kSourceDir = ANVIL_SOURCE_DIR;

// A quoted include of one file: its line and the path between the quotes.
struct QuotedInclude {
  int line = 0;
  std::string path;
};

std::vector<QuotedInclude> quoted_includes(const std::string& text) {
  static const std::regex kInclude(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<QuotedInclude> includes;
  std::istringstream lines(text);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    std::smatch match;
    if (std::regex_search(line, match, kInclude)) includes.push_back({number, match[1].str()});
  }
  return includes;
}

std::string first_component(const std::string& path) { return path.substr(0, path.find('/')); }

// The modules of src/: its folders.
std::set<std::string> source_modules() {
  std::set<std::string> modules;
  for (const auto& entry : fs::directory_iterator(kSourceDir / "src"))
    if (entry.is_directory()) modules.insert(entry.path().filename().string());
  return modules;
}

// "line N includes P" for each include of `text` (a file of module `own`) that names a private
// header of another module of `modules`.
std::vector<std::string> private_includes_of_other_modules(const std::string& text,
                                                           const std::string& own,
                                                           const std::set<std::string>& modules) {
  std::vector<std::string> violations;
  for (const QuotedInclude& include : quoted_includes(text)) {
    const std::string module = first_component(include.path);
    if (module != own && modules.count(module))
      violations.push_back("line " + std::to_string(include.line) + " includes \"" + include.path +
                           "\"");
  }
  return violations;
}

std::string read_file(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

bool is_source(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".cpp" || ext == ".h" || ext == ".cc" || ext == ".hpp";
}

TEST(IncludeGraph, CheckerFindsAPrivateIncludeOfAnotherModule) {
  const std::set<std::string> modules = {"ir", "transform", "driver"};
  const std::string text =
      "#include <vector>\n"
      "#include \"anvil/ir/ir.h\"\n"
      "#include \"driver/pipeline.h\"\n"
      "  #  include \"transform/pass_util.h\"\n"
      "#include \"ir/text_util.h\"\n";
  EXPECT_EQ(private_includes_of_other_modules(text, "driver", modules),
            (std::vector<std::string>{"line 4 includes \"transform/pass_util.h\"",
                                      "line 5 includes \"ir/text_util.h\""}));
  EXPECT_TRUE(
      private_includes_of_other_modules("#include \"ir/op/nn_util.h\"\n", "ir", modules).empty());
}

TEST(IncludeGraph, NoModuleIncludesAnotherModulesPrivateHeader) {
  const std::set<std::string> modules = source_modules();
  ASSERT_TRUE(modules.count("ir") && modules.count("driver")) << kSourceDir / "src";
  int checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kSourceDir / "src")) {
    if (!entry.is_regular_file() || !is_source(entry.path())) continue;
    const fs::path relative = fs::relative(entry.path(), kSourceDir / "src");
    if (std::distance(relative.begin(), relative.end()) < 2)
      continue;  // a file directly under src/ belongs to no module
    const std::string own = relative.begin()->string();
    for (const std::string& violation :
         private_includes_of_other_modules(read_file(entry.path()), own, modules))
      ADD_FAILURE() << "src/" << relative.string() << " " << violation
                    << ": another module's private header; use or add a public header in "
                       "include/anvil/";
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

// Public headers, clients and tools: a quoted include is public ("anvil/...") or a file beside
// the includer.
void expect_only_public_or_own_includes(const fs::path& root) {
  ASSERT_TRUE(fs::is_directory(root)) << root;
  int checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || !is_source(entry.path())) continue;
    for (const QuotedInclude& include : quoted_includes(read_file(entry.path()))) {
      if (first_component(include.path) == "anvil") continue;
      if (fs::exists(entry.path().parent_path() / include.path)) continue;
      ADD_FAILURE() << fs::relative(entry.path(), kSourceDir).string() << " line " << include.line
                    << " includes \"" << include.path
                    << "\", which is neither a public header (anvil/...) nor its own";
    }
    ++checked;
  }
  EXPECT_GT(checked, 0) << root;
}

TEST(IncludeGraph, PublicHeadersIncludeOnlyPublicHeaders) {
  expect_only_public_or_own_includes(kSourceDir / "include" / "anvil");
}

TEST(IncludeGraph, ToolsIncludeOnlyPublicHeadersOrTheirOwn) {
  expect_only_public_or_own_includes(kSourceDir / "tools");
}

TEST(IncludeGraph, PythonBindingsIncludeOnlyPublicHeadersOrTheirOwn) {
  expect_only_public_or_own_includes(kSourceDir / "python" / "src");
}

}  // namespace
