// The base of the CLI test suites: one scratch directory per suite holding the ONNX fixtures
// (frontend/onnx_fixtures.h) and whatever the suite's own setup adds, and the check every bad
// input case makes of anvil's answer.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "frontend/onnx_fixtures.h"
#include "support/test_util.h"

namespace anvil::testing {

class CliFixture : public ::testing::Test {
 protected:
  // Creates the suite's directory with the ONNX fixtures, then runs `python` (if any) with
  // `out_dir` set to it. Suites call it from their SetUpTestSuite.
  static void make_scratch_dir(const std::string& python = "") {
    dir_ = new ScratchDir();
    write_onnx_fixtures(dir_->path());
    if (!python.empty()) run_python(python, dir_->path());
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string path(const std::string& name) { return (*dir_ / name).string(); }

  // Checks that anvil failed with exit_code and printed exactly one line, "anvil: error: ...",
  // holding every word; `what` says which case it was in the failure message.
  static void expect_one_line_error(const CommandResult& r, int exit_code,
                                    const std::vector<std::string>& words,
                                    const std::string& what = "") {
    EXPECT_EQ(r.exit_code, exit_code) << what << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("anvil: error: ", 0), 0u) << what << "\n" << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << what << "\n" << r.err;
    for (const std::string& w : words)
      EXPECT_NE(r.err.find(w), std::string::npos) << what << ": '" << w << "' in " << r.err;
  }

  inline static ScratchDir* dir_ = nullptr;
};

}  // namespace anvil::testing
