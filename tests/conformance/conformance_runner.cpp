// Runs the ONNX backend node tests of the pinned onnx package (written out by
// generate_node_tests.py) through the importer and an executor, compares each output
// with the expected one, and prints "N passed, M failed, K skipped".
//
//   conformance_runner DATA_DIR [--skips FILE] [--filter TEXT] [--must-pass FILE]
//                      [--show-failures] [--executor reference|graph|vm|user] [--opt-level N]
//                      [--max-interpreted N] [--show-interpreted] [--list-passed]
//
// --must-pass names the tests that must pass, one a line: the run fails when any of them does
// not (a regression is never hidden by another test that newly passes), and it prints the tests
// that pass but are not listed, to be added to the list in the same change. --list-passed
// prints every passing test's name, one a line (to write such a list).
//
// The "user" executor runs each test as a user runs a model: imported as it is (nothing frozen
// to a constant, every input given at run time) and run on the executor `anvil run` picks
// (driver::pick_executor). It also counts the tests whose VM executable still evaluates a group
// with the reference kernels (a runtime function no loader could find by name), which
// --max-interpreted bounds.
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "anvil/driver/build.h"
#include "anvil/driver/vm_build.h"
#include "anvil/frontend/onnx.h"
#include "anvil/ir/functor.h"
#include "anvil/reference/reference.h"
#include "anvil/runtime/packed_func.h"
#include "anvil/runtime/vm_executable.h"
#include "anvil/support/error.h"
#include "frontend/onnx/converter.h"

namespace fs = std::filesystem;
using namespace anvil;

namespace {

struct Options {
  fs::path data_dir;
  fs::path skips_file;
  std::string filter;
  fs::path must_pass_file;
  bool list_passed = false;
  bool show_failures = false;
  std::string executor = "reference";
  int opt_level = 3;
  int64_t max_interpreted = -1;
  bool show_interpreted = false;
};

// Tests whose executable evaluated a group with the reference kernels (user executor).
int g_interpreted = 0;

// True when the executable calls a runtime function that is not a registered global function:
// a group evaluated by the reference kernels at run time.
bool has_interpreted_group(const vm::Executable& exec) {
  for (const vm::RuntimeFunc& func : exec.runtime_funcs)
    if (!find_global(func.name)) return true;
  return false;
}

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
  bool is_float = expected.dtype().is_float() || expected.dtype().is_bfloat() ||
                  expected.dtype().is_minifloat();
  double rtol = 1e-3, atol = 1e-5;
  if (expected.dtype() == DataType::float16() || expected.dtype().is_bfloat()) atol = 1e-3;
  // bfloat16 keeps 8 significant bits: a value rounded to it once more or once less along the
  // way (the expected outputs round every intermediate, compiled kernels keep float32) is one
  // step, up to 2^-7 relative, away.
  if (expected.dtype().is_bfloat()) rtol = 1.0 / 128;
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

// Names of the graph inputs and params that shape operands are computed from: every operand
// but the first of a dyn.* op, and every operand of range, followed back through the ops
// that compute them.
std::set<std::string> shape_operand_names(const frontend::ImportedModel& model) {
  std::vector<ir::Expr> operands;
  ir::post_order_visit(model.mod.get_function("main")->body, [&](const ir::Expr& e) {
    const auto* call = ir::as<ir::CallNode>(e);
    const ir::OpNode* op = call ? call->op() : nullptr;
    if (!op) return;
    bool dynamic = op->name.rfind("dyn.", 0) == 0;
    if (!dynamic && op->name != "range") return;
    for (size_t i = dynamic ? 1 : 0; i < call->args.size(); ++i) operands.push_back(call->args[i]);
  });
  // Only values are followed: shape_of and ndarray_size read their operand's type, not its
  // data, so a tensor whose shape is taken stays an input.
  std::set<std::string> names;
  std::set<const ir::ExprNode*> seen;
  while (!operands.empty()) {
    ir::Expr e = operands.back();
    operands.pop_back();
    if (!e || !seen.insert(e.get()).second) continue;
    if (const auto* var = ir::as<ir::VarNode>(e)) {
      names.insert(var->name);
    } else if (const auto* call = ir::as<ir::CallNode>(e)) {
      const ir::OpNode* op = call->op();
      if (op && (op->name == "shape_of" || op->name == "ndarray_size")) continue;
      for (const ir::Expr& arg : call->args) operands.push_back(arg);
    } else if (const auto* tuple = ir::as<ir::TupleNode>(e)) {
      for (const ir::Expr& field : tuple->fields) operands.push_back(field);
    } else if (const auto* get = ir::as<ir::TupleGetItemNode>(e)) {
      operands.push_back(get->tuple);
    }
  }
  return names;
}

// Runs one test directory; returns an empty string on success, else why it failed.
std::string run_test(const fs::path& dir, const Options& options) {
  fs::path data = dir / "test_data_set_0";
  frontend::ImportedModel model = frontend::from_onnx(dir / "model.onnx");
  std::map<std::string, Tensor> given;  // the test's input values, by input name
  for (size_t i = 0; i < model.input_names.size(); ++i) {
    fs::path file = data / ("input_" + std::to_string(i) + ".pb");
    if (!fs::exists(file)) return "missing " + file.string();
    const auto* declared =
        ir::as<ir::TensorTypeNode>(model.mod.get_function("main")->params[i]->annotation);
    Tensor value = load_tensor(file);
    given[model.input_names[i]] = declared ? as_dtype_of(value, declared->dtype) : value;
  }
  if (options.executor == "graph" || options.executor == "vm") {  // "user" imports as it is
    // Compiled code needs static shapes: the test's inputs fix every dynamic dim, and inputs
    // that only decide shapes (the shape, axes or pads operands of dyn.* ops, range's
    // operands) are compile-time constants, as TVM specializes them.
    frontend::OnnxImportOptions import_options;
    for (const auto& [name, value] : given)
      import_options.shape_dict.emplace_back(name, value.shape_vector());
    std::set<std::string> shape_operands = shape_operand_names(model);
    for (const std::string& name : shape_operands) {
      if (given.count(name)) {
        import_options.constant_inputs.emplace_back(name, given[name]);
      } else {
        for (const auto& [param, value] : model.params)
          if (param == name) import_options.constant_inputs.emplace_back(name, value);
      }
    }
    model = frontend::from_onnx(dir / "model.onnx", import_options);
  }
  std::vector<Tensor> args;
  for (const std::string& name : model.input_names) args.push_back(given.at(name));
  std::vector<Tensor> outputs;
  std::string executor = options.executor;
  if (executor == "user") {
    driver::BuildOptions build_options;
    build_options.pass_context.opt_level = options.opt_level;
    executor = driver::pick_executor(model.mod, model.params, build_options);
  }
  if (executor == "reference") {
    for (const auto& [name, tensor] : model.params) args.push_back(tensor);
    reference::Interpreter interpreter(model.mod);
    outputs = interpreter.run(args);
  } else if (executor == "graph") {
    driver::BuildOptions build_options;
    build_options.pass_context.opt_level = options.opt_level;
    GraphExecutor executor =
        driver::build(model.mod, model.params, build_options).create_executor();
    for (size_t i = 0; i < model.input_names.size(); ++i)
      executor.set_input(model.input_names[i], args[i]);
    executor.run();
    for (int i = 0; i < executor.get_num_outputs(); ++i)
      outputs.push_back(executor.get_output(i).copy());
  } else if (executor == "vm") {
    driver::BuildOptions build_options;
    build_options.pass_context.opt_level = options.opt_level;
    driver::VmModule built = driver::build_vm(model.mod, model.params, build_options);
    if (options.executor == "user" && has_interpreted_group(*built.executable())) {
      ++g_interpreted;
      if (options.show_interpreted)
        for (const vm::RuntimeFunc& func : built.executable()->runtime_funcs)
          std::printf("INTERPRETED %s: %s%s%s\n", dir.filename().c_str(), func.name.c_str(),
                      func.note.empty() ? "" : " // ", func.note.c_str());
    }
    VirtualMachine vm = built.create_vm();
    for (size_t i = 0; i < model.input_names.size(); ++i)
      vm.set_input(model.input_names[i], args[i]);
    vm.run();
    for (int i = 0; i < vm.get_num_outputs(); ++i) outputs.push_back(vm.get_output(i).copy());
  } else {
    throw_error("unknown executor '", executor, "'");
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
    else if (arg == "--must-pass")
      options.must_pass_file = next();
    else if (arg == "--list-passed")
      options.list_passed = true;
    else if (arg == "--show-failures")
      options.show_failures = true;
    else if (arg == "--executor")
      options.executor = next();
    else if (arg == "--opt-level")
      options.opt_level = std::stoi(next());
    else if (arg == "--show-interpreted")
      options.show_interpreted = true;
    else if (arg == "--max-interpreted")
      options.max_interpreted = std::stoll(next());
    else
      options.data_dir = arg;
  }
  if (options.data_dir.empty() || !fs::is_directory(options.data_dir)) {
    std::fprintf(stderr, "conformance_runner: no node test directory given (got '%s')\n",
                 options.data_dir.c_str());
    return 2;
  }
  auto skips = load_skips(options.skips_file);
  std::set<std::string> must_pass;
  if (!options.must_pass_file.empty()) {
    std::ifstream file(options.must_pass_file);
    if (!file) {
      std::fprintf(stderr, "conformance_runner: cannot read %s\n", options.must_pass_file.c_str());
      return 2;
    }
    for (std::string line; std::getline(file, line);)
      if (!line.empty() && line[0] != '#') must_pass.insert(line);
  }
  std::vector<fs::path> tests;
  for (const auto& entry : fs::directory_iterator(options.data_dir))
    if (entry.is_directory() &&
        entry.path().filename().string().find(options.filter) != std::string::npos)
      tests.push_back(entry.path());
  std::sort(tests.begin(), tests.end());

  int passed = 0, failed = 0, skipped = 0;
  std::map<std::string, int> failure_kinds;
  std::set<std::string> passed_names;
  std::map<std::string, std::string> failure_of;
  for (const fs::path& dir : tests) {
    std::string name = dir.filename().string();
    bool skip = false;
    for (const auto& [prefix, reason] : skips) skip |= name.rfind(prefix, 0) == 0;
    if (skip) {
      ++skipped;
      failure_of[name] = "skipped (skips.txt)";
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
      passed_names.insert(name);
      if (options.list_passed) std::printf("%s\n", name.c_str());
    } else {
      ++failed;
      failure_of[name] = why;
      if (options.show_failures) std::printf("FAIL %s: %s\n", name.c_str(), why.c_str());
    }
  }
  int regressed = 0;
  if (!options.must_pass_file.empty()) {
    for (const std::string& name : must_pass) {
      if (passed_names.count(name)) continue;
      // A filtered run checks only the listed tests it ran.
      auto it = failure_of.find(name);
      if (it == failure_of.end() && !options.filter.empty()) continue;
      ++regressed;
      std::printf("REGRESSED %s: %s\n", name.c_str(),
                  it == failure_of.end() ? "no such test" : it->second.c_str());
    }
    for (const std::string& name : passed_names)
      if (!must_pass.count(name))
        std::printf("NEWLY PASSES %s (add it to %s)\n", name.c_str(),
                    options.must_pass_file.filename().c_str());
  }
  std::printf("onnx node tests (%s executor): %d passed, %d failed, %d skipped of %zu\n",
              options.executor.c_str(), passed, failed, skipped, tests.size());
  if (options.executor == "user")
    std::printf("onnx node tests (user executor): %d ran a group on the reference kernels\n",
                g_interpreted);
  if (options.max_interpreted >= 0 && g_interpreted > options.max_interpreted) {
    std::printf(
        "conformance: %d tests ran groups on the reference kernels, above the recorded "
        "maximum of %lld\n",
        g_interpreted, (long long)options.max_interpreted);
    return 1;
  }
  if (regressed > 0) {
    std::printf("conformance: %d tests of %s no longer pass\n", regressed,
                options.must_pass_file.filename().c_str());
    return 1;
  }
  return 0;
}
