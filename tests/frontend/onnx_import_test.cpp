// The importer on small hand-made models: structure, names, and every kind of
// bad model file giving one clear error (run under the sanitizers too).
#include <gtest/gtest.h>

#include <random>

#include "anvil/frontend/onnx.h"
#include "anvil/support/error.h"
#include "frontend/onnx_fixtures.h"

namespace anvil::testing {
namespace {

class OnnxImport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir();
    write_onnx_fixtures(dir_->path());
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string path(const std::string& name) { return (*dir_ / name).string(); }

  // The message of the Error that importing `file` throws.
  static std::string import_error(const std::string& file) {
    try {
      frontend::from_onnx(file);
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "importing " << file << " succeeded";
    return "";
  }

  static ScratchDir* dir_;
};

ScratchDir* OnnxImport::dir_ = nullptr;

TEST_F(OnnxImport, KeepsInputAndOutputNames) {
  frontend::ImportedModel m = frontend::from_onnx(path("two_outputs.onnx"));
  EXPECT_EQ(m.input_names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(m.output_names, (std::vector<std::string>{"s", "p"}));
  ir::Function main = m.mod.get_function("main");
  ASSERT_EQ(main->params.size(), 2u);
  EXPECT_EQ(main->params[0]->name, "a");
  EXPECT_EQ(ir::type_to_string(main->checked_type),
            "fn (Tensor[(2, 3), float32], Tensor[(2, 3), float32]) -> (Tensor[(2, 3), float32], "
            "Tensor[(2, 3), float32])");
}

TEST_F(OnnxImport, ExternalDataLoadsFromBesideTheModel) {
  ASSERT_TRUE(std::filesystem::exists(*dir_ / "external.bin"));
  frontend::ImportedModel m = frontend::from_onnx(path("external.onnx"));
  ASSERT_EQ(m.params.size(), 1u);
  EXPECT_EQ(m.params[0].first, "w");
  const Tensor& w = m.params[0].second;
  EXPECT_EQ(w.shape_vector(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(w.get_as_double(0), 0.5);
  EXPECT_EQ(w.get_as_double(5), -16.0);
}

TEST_F(OnnxImport, MissingExternalDataNamesTheFile) {
  ScratchDir other;
  std::filesystem::copy_file(*dir_ / "external.onnx", other / "external.onnx");
  try {
    frontend::from_onnx(other / "external.onnx");
    FAIL() << "imported without its external data";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("external.bin"), std::string::npos) << e.what();
  }
}

TEST_F(OnnxImport, FreezeParamsTurnsInitializersIntoConstants) {
  frontend::OnnxImportOptions options;
  options.freeze_params = true;
  frontend::ImportedModel m = frontend::from_onnx(path("external.onnx"), options);
  EXPECT_TRUE(m.params.empty());
  ir::Function main = m.mod.get_function("main");
  ASSERT_EQ(main->params.size(), 1u);
  EXPECT_EQ(main->params[0]->name, "x");
}

TEST_F(OnnxImport, ShapeDictFixesDims) {
  frontend::OnnxImportOptions options;
  options.shape_dict = {{"a", {2, 3}}};
  frontend::ImportedModel m = frontend::from_onnx(path("add_relu.onnx"), options);
  options.shape_dict = {{"a", {4, 3}}};
  try {
    frontend::from_onnx(path("add_relu.onnx"), options);
    FAIL() << "a shape_dict contradicting the model was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'a'"), std::string::npos) << e.what();
  }
}

TEST_F(OnnxImport, ShapeDictMustNameAnInput) {
  frontend::OnnxImportOptions options;
  options.shape_dict = {{"nope", {1}}};
  try {
    frontend::from_onnx(path("add_relu.onnx"), options);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos) << e.what();
  }
}

TEST_F(OnnxImport, AllUnsupportedOpsReportedAtOnce) {
  std::string msg = import_error(path("unsupported.onnx"));
  EXPECT_NE(msg.find("FooOp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("BarOp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("opset 13"), std::string::npos) << msg;
  EXPECT_NE(msg.find("foo0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bar0"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST_F(OnnxImport, UndefinedTensorNamesTheNode) {
  std::string msg = import_error(path("undefined.onnx"));
  EXPECT_NE(msg.find("add0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'ghost'"), std::string::npos) << msg;
}

TEST_F(OnnxImport, CycleNamesANode) {
  std::string msg = import_error(path("cycle.onnx"));
  EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
  EXPECT_TRUE(msg.find("first") != std::string::npos || msg.find("second") != std::string::npos)
      << msg;
}

TEST_F(OnnxImport, DuplicateOutputNamesTheNode) {
  std::string msg = import_error(path("duplicate.onnx"));
  EXPECT_NE(msg.find("'y'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("two"), std::string::npos) << msg;
}

TEST_F(OnnxImport, NotAModel) {
  EXPECT_NE(import_error(path("tensor.pb")).find("not an ONNX model"), std::string::npos);
  EXPECT_NE(import_error(path("missing.onnx")).find("does not exist"), std::string::npos);
  EXPECT_NE(import_error(dir_->path().string()).find("directory"), std::string::npos);
  write_file(*dir_ / "empty.onnx", "");
  EXPECT_NE(import_error(path("empty.onnx")).find("empty"), std::string::npos);
}

// Every prefix of a valid model, and seeded random corruptions of it, must
// either import or fail with anvil::Error: never crash, never hang.
TEST_F(OnnxImport, TruncatedAndCorruptedModelsFailCleanly) {
  std::string bytes = read_file(path("add_relu.onnx"));
  ASSERT_GT(bytes.size(), 20u);
  int errors = 0;
  for (size_t n = 0; n < bytes.size(); ++n) {
    try {
      frontend::from_onnx_bytes(std::string_view(bytes).substr(0, n));
    } catch (const Error&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 0);
  std::mt19937 rng(1234);
  for (int round = 0; round < 300; ++round) {
    std::string corrupt = bytes;
    for (int k = 0; k < 4; ++k) corrupt[rng() % corrupt.size()] = char(rng());
    try {
      frontend::from_onnx_bytes(corrupt);
    } catch (const Error&) {
    }
  }
  for (int round = 0; round < 100; ++round) {
    std::string noise(size_t(rng() % 512), '\0');
    for (char& c : noise) c = char(rng());
    try {
      frontend::from_onnx_bytes(noise);
    } catch (const Error&) {
    }
  }
}

}  // namespace
}  // namespace anvil::testing
