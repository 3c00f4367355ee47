// export_library: a .tar (mod.so, mod.json, mod.params, as tvmc writes) or one self-contained
// .so whose data symbols hold the graph JSON and the params; for the VM a .tar of mod.so and
// mod.vm. All are built in a private temporary directory and renamed into place, so a failure
// leaves no partial file.
#include "driver/export.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "anvil/codegen/c.h"
#include "anvil/codegen/llvm.h"
#include "anvil/runtime/package.h"
#include "anvil/runtime/params.h"
#include "anvil/support/error.h"

extern char** environ;

namespace anvil::driver {

namespace fs = std::filesystem;

namespace {

// A private scratch directory (mode 0700), removed with its contents.
class ScratchDir {
 public:
  // Made beside `near` when that works, so the final rename stays on one file system.
  explicit ScratchDir(const fs::path& near) {
    fs::path parent = near.parent_path().empty() ? fs::path(".") : near.parent_path();
    std::string pattern = (parent / ".anvil-export-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throw_error("cannot write package '", near.string(),
                  "': cannot create a temporary directory in '", parent.string(),
                  "': ", std::strerror(errno));
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_bytes(const fs::path& path, std::string_view bytes, const std::string& what) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out.flush()) throw_error(what, ": cannot write '", path.string(), "'");
}

std::string read_bytes(const fs::path& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_error(what, ": cannot read '", path.string(), "'");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  if (text.size() > 400) text = text.substr(0, 400) + "...";
  return text;
}

// Runs argv without a shell; throws Error with the tool's output when it fails.
void run_tool(const std::vector<std::string>& argv, const fs::path& log, const std::string& what) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int spawn_error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0)
    throw_error(what, ": cannot run '", argv[0], "': ", std::strerror(spawn_error));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    throw_error(what, ": '", argv[0], "' failed (",
                WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status))
                                  : "signal " + std::to_string(WTERMSIG(status)),
                "): ", one_line(text.str()));
  }
}

// The kernels as a shared library (mod.so of a .tar package), with any extra objects.
void write_kernel_library(const std::vector<tir::PrimFunc>& funcs, const codegen::Target& target,
                          const codegen::ObjectCode* object_code, const fs::path& path,
                          const std::string& compiler, const std::string& what,
                          const std::vector<std::string>& extra_objects = {}) {
  codegen::ObjectCode compiled;
  if (!object_code) {
    compiled = codegen::compile_objects(funcs, target);
    object_code = &compiled;
  }
  try {
    codegen::link_shared_library(*object_code, path.string(), compiler, extra_objects);
  } catch (const Error& e) {
    throw_error(what, ": ", e.what());
  }
}

// The kernels and their library table as a position-independent object file (c target).
void write_c_kernel_object(const std::vector<tir::PrimFunc>& funcs, const fs::path& dir,
                           const fs::path& object, const std::string& compiler,
                           const std::string& what) {
  fs::path source = dir / "kernels.c";
  write_bytes(source, codegen::emit_c(funcs), what);
  run_tool({compiler, "-c", "-fPIC", "-O2", "-std=c99", "-o", object.string(), source.string()},
           dir / "cc.log", what);
}

// An assembler string literal naming path.
std::string asm_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

// Assembler source whose .incbin directives pull the files in as they are: fast for any
// size, where a C array of 100 MB would take the compiler minutes.
std::string data_assembly(const fs::path& json_file, const fs::path& params_file,
                          uint64_t params_size) {
  std::ostringstream s;
  s << "  .section .rodata\n";
  s << "  .globl " ANVIL_PACKAGE_GRAPH_JSON_SYMBOL "\n";
  s << "  .type " ANVIL_PACKAGE_GRAPH_JSON_SYMBOL ", @object\n";
  s << "  .balign 64\n";
  s << ANVIL_PACKAGE_GRAPH_JSON_SYMBOL ":\n";
  s << "  .incbin " << asm_string(json_file.string()) << "\n";
  s << "  .byte 0\n";
  s << "  .size " ANVIL_PACKAGE_GRAPH_JSON_SYMBOL ", . - " ANVIL_PACKAGE_GRAPH_JSON_SYMBOL "\n";
  s << "  .globl " ANVIL_PACKAGE_PARAMS_SYMBOL "\n";
  s << "  .type " ANVIL_PACKAGE_PARAMS_SYMBOL ", @object\n";
  s << "  .balign 64\n";
  s << ANVIL_PACKAGE_PARAMS_SYMBOL ":\n";
  s << "  .incbin " << asm_string(params_file.string()) << "\n";
  s << "  .size " ANVIL_PACKAGE_PARAMS_SYMBOL ", . - " ANVIL_PACKAGE_PARAMS_SYMBOL "\n";
  s << "  .globl " ANVIL_PACKAGE_PARAMS_SIZE_SYMBOL "\n";
  s << "  .type " ANVIL_PACKAGE_PARAMS_SIZE_SYMBOL ", @object\n";
  s << "  .balign 8\n";
  s << ANVIL_PACKAGE_PARAMS_SIZE_SYMBOL ":\n";
  s << "  .quad " << params_size << "\n";
  s << "  .size " ANVIL_PACKAGE_PARAMS_SIZE_SYMBOL ", 8\n";
  // No executable stack for the library that links this object.
  s << "  .section .note.GNU-stack,\"\",@progbits\n";
  return s.str();
}

void write_tar(const fs::path& path, const std::vector<std::pair<std::string, std::string>>& files,
               const std::string& what) {
  std::unique_ptr<archive, int (*)(archive*)> writer(archive_write_new(), archive_write_free);
  if (!writer) throw_error(what, ": out of memory creating the archive");
  auto check = [&](int status, const char* doing) {
    if (status != ARCHIVE_OK)
      throw_error(what, ": ", doing, ": ", archive_error_string(writer.get()));
  };
  check(archive_write_set_format_ustar(writer.get()), "selecting the ustar format");
  check(archive_write_open_filename(writer.get(), path.c_str()), "opening the archive");
  std::time_t now = std::time(nullptr);
  for (const auto& [name, bytes] : files) {
    std::unique_ptr<archive_entry, void (*)(archive_entry*)> entry(archive_entry_new(),
                                                                   archive_entry_free);
    archive_entry_set_pathname(entry.get(), name.c_str());
    archive_entry_set_filetype(entry.get(), AE_IFREG);
    archive_entry_set_perm(entry.get(), 0644);
    archive_entry_set_size(entry.get(), la_int64_t(bytes.size()));
    archive_entry_set_mtime(entry.get(), now, 0);
    check(archive_write_header(writer.get(), entry.get()), "writing a member header");
    if (archive_write_data(writer.get(), bytes.data(), bytes.size()) != la_ssize_t(bytes.size()))
      throw_error(what, ": writing member ", name, ": ", archive_error_string(writer.get()));
  }
  check(archive_write_close(writer.get()), "closing the archive");
}

// The bytes of the kernel library (mod.so of a .tar), built in the scratch directory.
std::string tar_kernel_library(const ScratchDir& scratch, const std::vector<tir::PrimFunc>& funcs,
                               const codegen::Target& target,
                               const codegen::ObjectCode* object_code, const std::string& compiler,
                               const std::string& what) {
  fs::path library = scratch.path() / "mod.so";
  if (target.kind == "c")
    codegen::write_c_library(funcs, library.string(), compiler);
  else
    write_kernel_library(funcs, target, object_code, library, compiler, what);
  return read_bytes(library, what);
}

void export_tar(const ScratchDir& scratch, const std::string& graph_json,
                const std::vector<tir::PrimFunc>& funcs, const codegen::Target& target,
                const codegen::ObjectCode* object_code, const std::string& params_bytes,
                const fs::path& staged, const std::string& compiler, const std::string& what) {
  write_tar(staged,
            {{"mod.so", tar_kernel_library(scratch, funcs, target, object_code, compiler, what)},
             {"mod.json", graph_json},
             {"mod.params", params_bytes}},
            what);
}

void export_shared(const ScratchDir& scratch, const std::string& graph_json,
                   const std::vector<tir::PrimFunc>& funcs, const codegen::Target& target,
                   const codegen::ObjectCode* object_code, const std::string& params_bytes,
                   const fs::path& staged, const std::string& compiler, const std::string& what) {
  const fs::path& dir = scratch.path();
  fs::path kernels = dir / "kernels.o", data_source = dir / "package_data.s",
           data = dir / "package_data.o", json_file = dir / "mod.json",
           params_file = dir / "mod.params";
  write_bytes(json_file, graph_json, what);
  write_bytes(params_file, params_bytes, what);
  write_bytes(
      data_source,
      data_assembly(fs::absolute(json_file), fs::absolute(params_file), params_bytes.size()), what);
  run_tool({compiler, "-c", "-o", data.string(), data_source.string()}, dir / "as.log", what);
  if (target.kind != "c") {
    write_kernel_library(funcs, target, object_code, staged, compiler, what, {data.string()});
    return;
  }
  write_c_kernel_object(funcs, dir, kernels, compiler, what);
  run_tool({compiler, "-shared", "-o", staged.string(), kernels.string(), data.string(), "-lm"},
           dir / "link.log", what);
}

}  // namespace

void export_package(const std::string& path, const std::string& graph_json,
                    const std::vector<tir::PrimFunc>& lowered_funcs, const codegen::Target& target,
                    const std::vector<std::pair<std::string, Tensor>>& params,
                    const std::string& compiler, const codegen::ObjectCode* object_code) {
  std::string what = "cannot write package '" + path + "'";
  fs::path target_path(path);
  std::string extension = target_path.extension().string();
  if (extension != ".tar" && extension != ".so")
    throw_error(what, ": unknown extension '", extension, "' (use .tar or .so)");
  std::error_code ec;
  if (fs::is_directory(target_path, ec)) throw_error(what, ": it is a directory");
  // Params are serialized first: a bad params set fails before anything is compiled.
  std::string params_bytes;
  try {
    params_bytes = save_params(params);
  } catch (const Error& e) {
    throw_error(what, ": ", e.what());
  }
  ScratchDir scratch(target_path);
  fs::path staged = scratch.path() / ("staged" + extension);
  if (extension == ".tar")
    export_tar(scratch, graph_json, lowered_funcs, target, object_code, params_bytes, staged,
               compiler, what);
  else
    export_shared(scratch, graph_json, lowered_funcs, target, object_code, params_bytes, staged,
                  compiler, what);
  fs::rename(staged, target_path, ec);
  if (ec) throw_error(what, ": cannot move it into place: ", ec.message());
}

void export_vm_package(const std::string& path, const std::string& exec_bytes,
                       const std::vector<tir::PrimFunc>& lowered_funcs,
                       const codegen::Target& target, const std::string& compiler,
                       const codegen::ObjectCode* object_code) {
  std::string what = "cannot write package '" + path + "'";
  fs::path target_path(path);
  std::string extension = target_path.extension().string();
  // The self-contained .so embeds a graph; a VM package has no such form yet.
  if (extension == ".so") throw_error(what, ": VM packages are written as .tar");
  if (extension != ".tar") throw_error(what, ": unknown extension '", extension, "' (use .tar)");
  std::error_code ec;
  if (fs::is_directory(target_path, ec)) throw_error(what, ": it is a directory");
  ScratchDir scratch(target_path);
  fs::path staged = scratch.path() / "staged.tar";
  write_tar(
      staged,
      {{"mod.so", tar_kernel_library(scratch, lowered_funcs, target, object_code, compiler, what)},
       {"mod.vm", exec_bytes}},
      what);
  fs::rename(staged, target_path, ec);
  if (ec) throw_error(what, ": cannot move it into place: ", ec.message());
}

}  // namespace anvil::driver
