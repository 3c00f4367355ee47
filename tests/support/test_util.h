// Helpers shared by the tests: running the CLI, scratch directories, Python fixtures.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace anvil::testing {

// What a finished child process left behind.
struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs argv[0] with the given arguments (no shell), capturing stdout and stderr.
CommandResult run_command(const std::vector<std::string>& argv);

// Runs the anvil binary under test with the given arguments.
CommandResult run_anvil(const std::vector<std::string>& args);

// Runs a Python snippet with the project's virtual environment; fails the test on error.
// The snippet sees the scratch directory as the variable `out_dir`.
void run_python(const std::string& code, const std::filesystem::path& out_dir);

// A fresh directory removed when the object goes away.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Writes bytes to a file, replacing it.
void write_file(const std::filesystem::path& path, const std::string& bytes);
// Reads a whole file.
std::string read_file(const std::filesystem::path& path);

}  // namespace anvil::testing
