// Runs the ONNX backend node tests (onnx/backend/test/data/node in the pinned
// onnx package) through the importer and an executor, compares each output
// with the expected one, and prints "N passed, M failed, K skipped".
//
//   conformance_runner DATA_DIR [--skips FILE] [--filter TEXT] [--min-passed N]
//                      [--show-failures] [--executor reference]
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "anvil/frontend/onnx.h"
#include "anvil/reference/reference.h"
#include "anvil/support/error.h"
#include "frontend/onnx/converter.h"

namespace fs = std::filesystem;
using namespace anvil;

namespace {

struct Options {
  fs::path data_dir;
  fs::path skips_file;
  std::string filter;
  int64_t min_passed = -1;
  bool show_failures = false;
  std::string executor = "reference";
};

std::string read_all(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Skips: one test-name prefix per line, then the reason; '#' starts a comment.
std::vector<std::pair<std::string, std::string>> load_skips(const fs::path& path) {
  std::vector<std::pair<std::string, std::string>> skips;
  if (path.empty()) return skips;
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string name, reason;
    in >> name;
    std::getline(in, reason);
    skips.emplace_back(name, reason);
  }
  return skips;
}

Tensor load_tensor(const fs::path& path) {
  onnx::TensorProto proto;
  std::string bytes = read_all(path);
  if (!proto.ParseFromString(bytes)) throw_error("cannot parse tensor file ", path.string());
  return frontend::onnx_import::tensor_from_proto(proto, path.parent_path());
}

// The node tests store bfloat16 data as uint16 bit patterns; read them as the
// bfloat16 they stand for when the other side of the comparison is bfloat16.
Tensor as_dtype_of(const Tensor& t, DataType want) {
  if (want.is_bfloat() && t.dtype() == DataType::uint16())
    return Tensor::wrap(t.data(), t.shape_vector(), want).copy();
  return t;
}

// Tolerances of the ONNX backend tests' own runner: rtol 1e-3, atol 1e-7 by
// default; we use atol 1e-5 since float32 kernels accumulate differently.
std::string compare(const Tensor& expected, const Tensor& got, const std::string& name) {
  if (expected.dtype() != got.dtype())
    return name + ": dtype " + got.dtype().to_string() + ", expected " +
           expected.dtype().to_string();
  if (expected.shape_vector() != got.shape_vector())
    return name + ": shape " + shape_to_string(got.shape()) + ", expected " +
           shape_to_string(expected.shape());
  bool is_float = expected.dtype().is_float() || expected.dtype().is_bfloat();
  double rtol = 1e-3, atol = 1e-5;
  if (expected.dtype() == DataType::float16() || expected.dtype().is_bfloat()) atol = 1e-3;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    double e = expected.get_as_double(i), g = got.get_as_double(i);
    if (is_float) {
      if (std::isnan(e) && std::isnan(g)) continue;
      if (std::isinf(e) && e == g) continue;
      if (std::fabs(e - g) <= atol + rtol * std::fabs(e)) continue;
    } else if (e == g) {
      continue;
    }
    return str_cat(name, ": element ", i, " is ", g, ", expected ", e);
  }
  return "";
}

// Runs one test directory; returns an empty string on success, else why it failed.
std::string run_test(const fs::path& dir, const Options& options) {
  frontend::ImportedModel model = frontend::from_onnx(dir / "model.onnx");
  fs::path data = dir / "test_data_set_0";
  std::vector<Tensor> args;
  for (size_t i = 0; i < model.input_names.size(); ++i) {
    fs::path file = data / ("input_" + std::to_string(i) + ".pb");
    if (!fs::exists(file)) return "missing " + file.string();
    const auto* declared =
        ir::as<ir::TensorTypeNode>(model.mod.get_function("main")->params[i]->annotation);
    Tensor value = load_tensor(file);
    args.push_back(declared ? as_dtype_of(value, declared->dtype) : value);
  }
  for (const auto& [name, tensor] : model.params) args.push_back(tensor);
  std::vector<Tensor> outputs;
  if (options.executor == "reference") {
    reference::Interpreter interpreter(model.mod);
    outputs = interpreter.run(args);
  } else {
    throw_error("unknown executor '", options.executor, "'");
  }
  for (size_t i = 0; i < model.output_names.size(); ++i) {
    fs::path file = data / ("output_" + std::to_string(i) + ".pb");
    if (!fs::exists(file)) return "missing " + file.string();
    if (i >= outputs.size()) return str_cat("only ", outputs.size(), " outputs");
    std::string diff = compare(as_dtype_of(load_tensor(file), outputs[i].dtype()), outputs[i],
                               "output " + std::to_string(i));
    if (!diff.empty()) return diff;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "conformance_runner: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--skips")
      options.skips_file = next();
    else if (arg == "--filter")
      options.filter = next();
    else if (arg == "--min-passed")
      options.min_passed = std::stoll(next());
    else if (arg == "--show-failures")
      options.show_failures = true;
    else if (arg == "--executor")
      options.executor = next();
    else
      options.data_dir = arg;
  }
  if (options.data_dir.empty() || !fs::is_directory(options.data_dir)) {
    std::fprintf(stderr, "conformance_runner: no node test directory given (got '%s')\n",
                 options.data_dir.c_str());
    return 2;
  }
  auto skips = load_skips(options.skips_file);
  std::vector<fs::path> tests;
  for (const auto& entry : fs::directory_iterator(options.data_dir))
    if (entry.is_directory() &&
        entry.path().filename().string().find(options.filter) != std::string::npos)
      tests.push_back(entry.path());
  std::sort(tests.begin(), tests.end());

  int passed = 0, failed = 0, skipped = 0;
  std::map<std::string, int> failure_kinds;
  for (const fs::path& dir : tests) {
    std::string name = dir.filename().string();
    bool skip = false;
    for (const auto& [prefix, reason] : skips) skip |= name.rfind(prefix, 0) == 0;
    if (skip) {
      ++skipped;
      continue;
    }
    std::string why;
    try {
      why = run_test(dir, options);
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (why.empty()) {
      ++passed;
    } else {
      ++failed;
      if (options.show_failures) std::printf("FAIL %s: %s\n", name.c_str(), why.c_str());
    }
  }
  std::printf("onnx node tests (%s executor): %d passed, %d failed, %d skipped of %zu\n",
              options.executor.c_str(), passed, failed, skipped, tests.size());
  if (options.min_passed >= 0 && passed < options.min_passed) {
    std::printf("conformance: %d passed is below the recorded minimum of %lld\n", passed,
                (long long)options.min_passed);
    return 1;
  }
  return 0;
}
