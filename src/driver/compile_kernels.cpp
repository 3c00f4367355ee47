#include "driver/compile_kernels.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "anvil/codegen/c.h"
#include "anvil/codegen/llvm.h"
#include "anvil/ir/infer_type.h"
#include "anvil/transform/passes.h"

namespace anvil::driver {

BuildTarget resolve_build_target(const std::string& text) {
  BuildTarget resolved;
  resolved.target = text == "llvm" ? codegen::Target::host() : codegen::Target::parse(text);
  if (resolved.target.kind == "c" && resolved.target.mcpu.empty())
    resolved.target.mcpu = codegen::Target::host().mcpu;
  resolved.vector_bits = resolved.target.kind == "c" ? codegen::Target::host().vector_bits()
                                                     : resolved.target.vector_bits();
  return resolved;
}

BuildStart start_build(const ir::IRModule& mod,
                       const std::vector<std::pair<std::string, Tensor>>& params,
                       const BuildOptions& options) {
  BuildStart start;
  auto [target, vector_bits] = resolve_build_target(options.target);
  start.target = target;
  start.vector_bits = vector_bits;
  const bool amx_bf16 = target.has_amx_bf16();
  start.pipeline = {vector_bits / 32, target.keys, target.has_bf16_dot_product(), amx_bf16};
  start.bound = transform::bind_params(ir::infer_type(mod), params);
  start.lower_options.vector_bits = vector_bits;
  start.lower_options.target_kind = target.kind;
  start.lower_options.strategy_keys = target.keys;
  start.lower_options.amx_bf16 = amx_bf16;
  start.lower_options.config_for = options.config_for;
  if (options.progress)
    start.lower_progress = [progress = options.progress](int done, int total) {
      progress("lower", done, total);
    };
  return start;
}

std::string build_precision(const BuildOptions& options) {
  const codegen::Target target = resolve_build_target(options.target).target;
  PipelineTarget pipeline;
  pipeline.bf16_dot_product = target.has_bf16_dot_product();
  return resolve_precision(options.pass_context, pipeline);
}

namespace {

Module load_c_library(const std::vector<tir::PrimFunc>& kernels) {
  static std::atomic<int> counter{0};
  std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("anvil-c-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".so");
  codegen::write_c_library(kernels, path.string());
  Module lib = Module::load_shared(path.string());
  std::filesystem::remove(path);  // the mapping stays valid
  return lib;
}

}  // namespace

CompiledKernels compile_kernel_library(const std::vector<tir::PrimFunc>& kernels,
                                       const codegen::Target& target, int threads) {
  CompiledKernels compiled;
  if (kernels.empty()) {
    compiled.lib = Module::create("empty");
    return compiled;
  }
  if (target.kind == "c") {
    auto start = std::chrono::steady_clock::now();
    compiled.lib = load_c_library(kernels);
    compiled.load_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return compiled;
  }
  codegen::CodegenOptions options;
  options.threads = threads;
  auto code =
      std::make_shared<codegen::ObjectCode>(codegen::compile_objects(kernels, target, options));
  auto start = std::chrono::steady_clock::now();
  compiled.lib = codegen::jit_load(*code);
  compiled.load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  compiled.object_code = std::move(code);
  return compiled;
}

void PhaseTimes::add(std::string name, double seconds, std::string note, bool nested) {
  rows_.push_back(Row{std::move(name), seconds, std::move(note), nested});
}

void PhaseTimes::print(const std::string& title) const {
  double total = 0;
  for (const Row& row : rows_)
    if (!row.nested) total += row.seconds;
  std::fprintf(stderr, "%s (total %.2f ms):\n", title.c_str(), total * 1e3);
  for (const Row& row : rows_) {
    std::string name = (row.nested ? "  " : "") + row.name;
    std::fprintf(stderr, "  %-28s %10.2f ms%s%s\n", name.c_str(), row.seconds * 1e3,
                 row.note.empty() ? "" : "  ", row.note.c_str());
  }
}

}  // namespace anvil::driver
