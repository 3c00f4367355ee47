// Building and optimizing the LLVM module, and writing it out as IR text, assembly, an object
// file or a shared library.
#include <fcntl.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "anvil/codegen/llvm.h"
#include "anvil/support/error.h"
#include "codegen/llvm/codegen_llvm.h"

extern char** environ;

namespace anvil::codegen {

namespace llvm_backend {

namespace {

void verify(const llvm::Module& module) {
  std::string problems;
  llvm::raw_string_ostream problem_stream(problems);
  if (llvm::verifyModule(module, &problem_stream))
    ANVIL_ICHECK(false, "the LLVM back end produced invalid IR: ", problem_stream.str());
}

}  // namespace

void optimize_module(llvm::Module& module, llvm::TargetMachine& tm, int opt_level) {
  llvm::LoopAnalysisManager loop_analyses;
  llvm::FunctionAnalysisManager function_analyses;
  llvm::CGSCCAnalysisManager cgscc_analyses;
  llvm::ModuleAnalysisManager module_analyses;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = opt_level >= 2;
  tuning.SLPVectorization = opt_level >= 2;
  tuning.LoopUnrolling = opt_level >= 1;
  llvm::PassBuilder builder(&tm, tuning);
  builder.registerModuleAnalyses(module_analyses);
  builder.registerCGSCCAnalyses(cgscc_analyses);
  builder.registerFunctionAnalyses(function_analyses);
  builder.registerLoopAnalyses(loop_analyses);
  builder.crossRegisterProxies(loop_analyses, function_analyses, cgscc_analyses, module_analyses);
  llvm::OptimizationLevel level = opt_level <= 0   ? llvm::OptimizationLevel::O0
                                  : opt_level == 1 ? llvm::OptimizationLevel::O1
                                  : opt_level == 2 ? llvm::OptimizationLevel::O2
                                                   : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager passes = level == llvm::OptimizationLevel::O0
                                       ? builder.buildO0DefaultPipeline(level)
                                       : builder.buildPerModuleDefaultPipeline(level);
  passes.run(module, module_analyses);
}

std::unique_ptr<llvm::Module> build_module(const std::vector<tir::PrimFunc>& funcs,
                                           const ResolvedTarget& target, llvm::TargetMachine& tm,
                                           llvm::LLVMContext& context, bool with_table,
                                           std::vector<std::string>* packed_symbols) {
  auto module = std::make_unique<llvm::Module>("anvil_kernels", context);
  module->setTargetTriple(target.triple);
  module->setDataLayout(tm.createDataLayout());
  CodeGenLLVM codegen(*module, target);
  for (const tir::PrimFunc& func : funcs) codegen.add_function(func);
  if (with_table) codegen.add_library_table(codegen.packed_symbols());
  if (packed_symbols) *packed_symbols = codegen.packed_symbols();
  verify(*module);
  return module;
}

std::unique_ptr<llvm::Module> build_table_module(const std::vector<std::string>& packed_symbols,
                                                 const ResolvedTarget& target,
                                                 llvm::TargetMachine& tm,
                                                 llvm::LLVMContext& context) {
  auto module = std::make_unique<llvm::Module>("anvil_library_table", context);
  module->setTargetTriple(target.triple);
  module->setDataLayout(tm.createDataLayout());
  CodeGenLLVM codegen(*module, target);
  codegen.add_library_table(packed_symbols);
  verify(*module);
  return module;
}

std::string emit_machine_code(llvm::Module& module, llvm::TargetMachine& tm,
                              llvm::CodeGenFileType kind) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream out(buffer);
  llvm::legacy::PassManager passes;
  if (tm.addPassesToEmitFile(passes, out, nullptr, kind))
    throw_error("LLVM cannot emit this file type for '", module.getTargetTriple(), "'");
  passes.run(module);
  return std::string(buffer.begin(), buffer.end());
}

}  // namespace llvm_backend

namespace {

using llvm_backend::ResolvedTarget;

// The module for funcs compiled for target, plus everything that must outlive it.
struct BuiltModule {
  ResolvedTarget target;
  std::unique_ptr<llvm::TargetMachine> tm;
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
};

BuiltModule build(const std::vector<tir::PrimFunc>& funcs, const Target& target) {
  if (target.kind != "llvm")
    throw_error("the LLVM back end cannot compile for target '", target.to_string(), "'");
  BuiltModule built;
  built.target = llvm_backend::resolve_target(target);
  built.tm = llvm_backend::create_target_machine(built.target, /*pic=*/true);
  built.context = std::make_unique<llvm::LLVMContext>();
  built.module = llvm_backend::build_module(funcs, built.target, *built.tm, *built.context,
                                            /*with_table=*/true, nullptr);
  llvm_backend::optimize_module(*built.module, *built.tm, built.target.opt_level);
  return built;
}

std::string emit_file(BuiltModule& built, llvm::CodeGenFileType kind) {
  return llvm_backend::emit_machine_code(*built.module, *built.tm, kind);
}

// Runs argv without a shell; returns the exit status and the combined output.
std::pair<int, std::string> run_program(const std::vector<std::string>& argv,
                                        const std::filesystem::path& output_file) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int spawn_error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) return {-1, std::strerror(spawn_error)};
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::ifstream in(output_file);
  std::stringstream text;
  text << in.rdbuf();
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return {code, text.str()};
}

// A private scratch directory, removed on destruction.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("anvil-llvm-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (char& c : text)
    if (c == '\n') c = ' ';
  return text;
}

}  // namespace

std::string emit_llvm_ir(const std::vector<tir::PrimFunc>& funcs, const Target& target) {
  BuiltModule built = build(funcs, target);
  std::string text;
  llvm::raw_string_ostream out(text);
  built.module->print(out, nullptr);
  return out.str();
}

std::string emit_assembly(const std::vector<tir::PrimFunc>& funcs, const Target& target) {
  BuiltModule built = build(funcs, target);
  return emit_file(built, llvm::CGFT_AssemblyFile);
}

void write_object_file(const std::vector<tir::PrimFunc>& funcs, const Target& target,
                       const std::string& path) {
  BuiltModule built = build(funcs, target);
  std::string object = emit_file(built, llvm::CGFT_ObjectFile);
  std::ofstream out(path, std::ios::binary);
  out.write(object.data(), std::streamsize(object.size()));
  if (!out) throw_error("cannot write object file '", path, "'");
}

void link_shared_library(const ObjectCode& code, const std::string& path,
                         const std::string& compiler,
                         const std::vector<std::string>& extra_objects) {
  TempDir scratch;
  std::vector<std::string> command = {compiler, "-shared", "-o", path};
  auto write = [&](const std::string& bytes, const std::string& name) {
    std::filesystem::path object = scratch.path() / name;
    std::ofstream out(object, std::ios::binary);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    if (!out.flush()) throw_error("cannot write object file '", object.string(), "'");
    command.push_back(object.string());
  };
  // Numbered names: kernel symbols may be long or contain characters a file name should not.
  for (size_t i = 0; i < code.kernel_objects.size(); ++i)
    write(code.kernel_objects[i], "kernel" + std::to_string(i) + ".o");
  write(code.table_object, "library_table.o");
  command.insert(command.end(), extra_objects.begin(), extra_objects.end());
  command.push_back("-lm");
  auto [status, output] = run_program(command, scratch.path() / "link.log");
  if (status == -1)
    throw_error("cannot run compiler '", compiler, "' to link '", path, "': ", output);
  if (status != 0)
    throw_error("linking kernel library '", path, "' with '", compiler, "' failed (exit code ",
                status, "): ", one_line(output));
}

void write_shared_library(const std::vector<tir::PrimFunc>& funcs, const Target& target,
                          const std::string& path, const std::string& compiler) {
  link_shared_library(compile_objects(funcs, target), path, compiler);
}

}  // namespace anvil::codegen
