#include "support/test_util.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <sstream>

extern char** environ;

namespace anvil::testing {
namespace {}  // namespace

CommandResult run_command(const std::vector<std::string>& argv) {
  // Output goes to temporary files rather than pipes so a chatty child cannot
  // block on a full pipe while we wait for it.
  ScratchDir dir;
  std::string out_path = dir / "stdout", err_path = dir / "stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  CommandResult result;
  if (rc != 0) {
    result.err = "spawn failed: " + std::string(strerror(rc));
    return result;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  return result;
}

CommandResult run_anvil(const std::vector<std::string>& args) {
  std::vector<std::string> argv{ANVIL_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv);
}

void run_python(const std::string& code, const std::filesystem::path& out_dir) {
  std::string program =
      "import os, sys\nout_dir = " + std::string("r'") + out_dir.string() + "'\n" + code;
  CommandResult r = run_command({ANVIL_PYTHON, "-c", program});
  ASSERT_EQ(r.exit_code, 0) << "python failed:\n" << r.err;
}

ScratchDir::ScratchDir() {
  std::random_device rd;
  auto base = std::filesystem::temp_directory_path();
  for (;;) {
    path_ = base / ("anvil-test-" + std::to_string(rd()));
    if (std::filesystem::create_directory(path_)) break;
  }
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), std::streamsize(bytes.size()));
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace anvil::testing
