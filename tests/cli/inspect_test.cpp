#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <sstream>

#include "anvil/runtime/params.h"
#include "support/test_util.h"

namespace anvil::testing {
namespace {

struct Row {
  std::string name, dtype, shape, min, max, mean;
};

// The table rows of `anvil inspect` output, after the summary line and the column header.
std::vector<Row> parse_rows(const std::string& out) {
  static const std::regex row(R"(^(\S+)\s+(\S+)\s+(\([^)]*\))\s+(\S+)\s+(\S+)\s+(\S+)$)");
  std::vector<Row> rows;
  std::istringstream lines(out);
  std::string line;
  std::getline(lines, line);  // summary
  std::getline(lines, line);  // column header
  EXPECT_EQ(line.substr(0, 4), "name") << out;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, row)) {
      ADD_FAILURE() << "unparsable row: '" << line << "'";
      continue;
    }
    rows.push_back({m[1], m[2], m[3], m[4], m[5], m[6]});
  }
  return rows;
}

void expect_number(const std::string& text, double expected, const std::string& context) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  ASSERT_TRUE(end && *end == '\0') << context << ": '" << text << "' is not a number";
  EXPECT_NEAR(value, expected, std::abs(expected) * 1e-5 + 1e-9) << context;
}

void expect_row(const Row& row, const std::string& name, const std::string& dtype,
                const std::string& shape, double min, double max, double mean) {
  EXPECT_EQ(row.name, name);
  EXPECT_EQ(row.dtype, dtype) << name;
  EXPECT_EQ(row.shape, shape) << name;
  expect_number(row.min, min, name + " min");
  expect_number(row.max, max, name + " max");
  expect_number(row.mean, mean, name + " mean");
}

// Checks the CLI's contract for bad input: exit 1, nothing on stdout, one line on stderr.
void expect_one_line_error(const CommandResult& r, const std::string& path,
                           const std::string& needle = "") {
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("anvil: error: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_NE(r.err.find("'" + path + "'"), std::string::npos) << r.err;
  if (!needle.empty()) {
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  }
}

TEST(Inspect, NumpySavezAndSavezCompressed) {
  ScratchDir dir;
  run_python(
      "import numpy as np\n"
      "arrays = dict(\n"
      "    ids=np.array([[3, -7, 12], [0, 5, 2**40]], dtype=np.int64),\n"
      "    half=np.array([1.5, -2.25, 0.5, 4.0], dtype=np.float16),\n"
      "    mask=np.array([True, False, True]),\n"
      "    weights=np.array([[0.25, -1.0], [2.0, 3.5]], dtype=np.float32),\n"
      "    empty=np.zeros((0, 3), dtype=np.float32),\n"
      "    scalar=np.float64(-8.5))\n"
      "np.savez(os.path.join(out_dir, 'stored.npz'), **arrays)\n"
      "np.savez_compressed(os.path.join(out_dir, 'compressed.npz'), **arrays)\n",
      dir.path());
  for (const char* file : {"stored.npz", "compressed.npz"}) {
    std::string path = (dir / file).string();
    CommandResult r = run_anvil({"inspect", path});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out.rfind(path + ": npz file, 6 tensors", 0), 0u) << r.out;
    std::vector<Row> rows = parse_rows(r.out);
    ASSERT_EQ(rows.size(), 6u) << r.out;
    expect_row(rows[0], "ids", "int64", "(2, 3)", -7, 1099511627776.0,
               (3 - 7 + 12 + 0 + 5 + 1099511627776.0) / 6);
    EXPECT_EQ(rows[0].max, "1099511627776");  // integers keep every digit
    expect_row(rows[1], "half", "float16", "(4,)", -2.25, 4, 0.9375);
    expect_row(rows[2], "mask", "bool", "(3,)", 0, 1, 2.0 / 3);
    EXPECT_EQ(rows[2].min, "0");
    EXPECT_EQ(rows[2].max, "1");
    expect_row(rows[3], "weights", "float32", "(2, 2)", -1, 3.5, 1.1875);
    EXPECT_EQ(rows[4].name, "empty");
    EXPECT_EQ(rows[4].shape, "(0, 3)");
    EXPECT_EQ(rows[4].min + rows[4].max + rows[4].mean, "---");
    expect_row(rows[5], "scalar", "float64", "()", -8.5, -8.5, -8.5);
  }
}

TEST(Inspect, NumpyNpyFileIsNamedAfterItsStem) {
  ScratchDir dir;
  run_python(
      "import numpy as np\n"
      "np.save(os.path.join(out_dir, 'image.npy'), np.arange(12, dtype='>i2').reshape(3, 4))\n",
      dir.path());
  CommandResult r = run_anvil({"inspect", (dir / "image.npy").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<Row> rows = parse_rows(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  expect_row(rows[0], "image", "int16", "(3, 4)", 0, 11, 5.5);
}

TEST(Inspect, AnvilWrittenParamsFile) {
  ScratchDir dir;
  Tensor weight = Tensor::empty({2, 2}, DataType::float32());
  for (int i = 0; i < 4; ++i) weight.set_from_double(i, i * 1.5 - 1);
  Tensor mask = Tensor::zeros({5}, DataType::boolean());
  mask.set_from_double(3, 1);
  Tensor steps = Tensor::empty({}, DataType::uint64());
  *steps.data_as<uint64_t>() = 18446744073709551615ull;
  std::string path = (dir / "mod.params").string();
  write_params_file(path, {{"conv1.weight", weight}, {"mask", mask}, {"steps", steps}});
  CommandResult r = run_anvil({"inspect", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind(path + ": params file, 3 tensors", 0), 0u) << r.out;
  std::vector<Row> rows = parse_rows(r.out);
  ASSERT_EQ(rows.size(), 3u) << r.out;
  expect_row(rows[0], "conv1.weight", "float32", "(2, 2)", -1, 3.5, 1.25);
  expect_row(rows[1], "mask", "bool", "(5,)", 0, 1, 0.2);
  EXPECT_EQ(rows[2].max, "18446744073709551615");
}

TEST(Inspect, HelpShowsExamples) {
  CommandResult r = run_anvil({"inspect", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Examples:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("anvil inspect weights.npz"), std::string::npos) << r.out;
}

TEST(Inspect, BadInputIsOneLineErrorNamingTheFile) {
  ScratchDir dir;
  // A file that does not exist is a usage error (exit 2), like a bad flag value.
  std::string missing = (dir / "missing.npz").string();
  CommandResult gone = run_anvil({"inspect", missing});
  EXPECT_EQ(gone.exit_code, 2) << gone.err;
  EXPECT_EQ(gone.err.find('\n'), gone.err.size() - 1) << gone.err;
  EXPECT_NE(gone.err.find("'" + missing + "' does not exist (no such file"), std::string::npos)
      << gone.err;
  expect_one_line_error(run_anvil({"inspect", dir.path().string()}), dir.path().string(),
                        "is a directory");

  std::string empty = (dir / "empty.bin").string();
  write_file(empty, "");
  expect_one_line_error(run_anvil({"inspect", empty}), empty, "is empty");

  std::string text = (dir / "notes.txt").string();
  write_file(text, "hello\nworld\n");
  expect_one_line_error(run_anvil({"inspect", text}), text, "not a .npy, .npz or params file");

  Tensor t = Tensor::zeros({4, 4}, DataType::float32());
  std::string params = save_params({{"w", t}});
  std::string cut_params = (dir / "cut.params").string();
  write_file(cut_params, params.substr(0, params.size() - 7));
  expect_one_line_error(run_anvil({"inspect", cut_params}), cut_params,
                        "truncated: tensor 'w' (index 0) declares 64 bytes of data, 57 remain");

  std::string npz = serialize_npz({{"w", t}}, true);
  std::string cut_npz = (dir / "cut.npz").string();
  write_file(cut_npz, npz.substr(0, npz.size() / 2));
  expect_one_line_error(run_anvil({"inspect", cut_npz}), cut_npz);

  std::string npy = serialize_npy(t);
  std::string cut_npy = (dir / "cut.npy").string();
  write_file(cut_npy, npy.substr(0, npy.size() - 1));
  expect_one_line_error(run_anvil({"inspect", cut_npy}), cut_npy, "truncated");

  run_python(
      "import numpy as np\n"
      "np.save(os.path.join(out_dir, 'fortran.npy'), np.asfortranarray(np.ones((2, 3))))\n",
      dir.path());
  std::string fortran = (dir / "fortran.npy").string();
  expect_one_line_error(run_anvil({"inspect", fortran}), fortran, "is stored in Fortran order");
}

}  // namespace
}  // namespace anvil::testing
