// The base of the CLI test suites: one scratch directory per suite holding the ONNX fixtures
// (frontend/onnx_fixtures.h) and whatever the suite's own setup adds, and the check every bad
// input case makes of anvil's answer.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "anvil/runtime/npy.h"
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

  // Runs `anvil run MODEL.onnx --inputs MODEL.in.npz` and compares every output with the
  // oracle's MODEL.ort.npz (written by the suite's setup): dtype and shape equal, integers within
  // `int_steps`, floats within 1e-4 of the output's largest magnitude plus `float_atol`.
  static void expect_run_matches_oracle(const std::string& model, double int_steps = 0,
                                        double float_atol = 0) {
    std::string out = path(model + ".anvil.npz");
    CommandResult r = run_anvil(
        {"run", path(model + ".onnx"), "--inputs", path(model + ".in.npz"), "--outputs", out});
    ASSERT_EQ(r.exit_code, 0) << model << ": " << r.err;
    NamedTensors got = read_npz(out), want = read_npz(path(model + ".ort.npz"));
    ASSERT_EQ(got.size(), want.size()) << model;
    for (size_t k = 0; k < got.size(); ++k) {
      const Tensor &g = got[k].second, &w = want[k].second;
      ASSERT_EQ(g.dtype(), w.dtype()) << model << " output " << k;
      ASSERT_EQ(g.shape_vector(), w.shape_vector()) << model << " output " << k;
      double scale = 1e-6;
      for (int64_t i = 0; i < w.numel(); ++i)
        scale = std::max(scale, std::fabs(w.get_as_double(i)));
      double tolerance = w.dtype().is_float() ? 1e-4 * scale + float_atol : int_steps;
      for (int64_t i = 0; i < w.numel(); ++i)
        ASSERT_LE(std::fabs(g.get_as_double(i) - w.get_as_double(i)), tolerance)
            << model << " output " << k << " element " << i;
    }
  }

  inline static ScratchDir* dir_ = nullptr;
};

}  // namespace anvil::testing
