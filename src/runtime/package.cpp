// load_module: reads a .tar package (mod.so, mod.json, mod.params; or mod.so, mod.vm for the
// VM) or a self-contained .so, recognised by content. Everything is checked before the kernel
// library is loaded, and the library itself is checked to lie within its file, so a damaged package
// is an Error, never a crash inside the dynamic loader.
#include "anvil/runtime/package.h"

#include <archive.h>
#include <archive_entry.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "anvil/runtime/params.h"
#include "anvil/runtime/vm_executable.h"
#include "anvil/support/error.h"
#include "runtime/binary_io.h"
#include "runtime/graph_executor_spec.h"

namespace anvil {

namespace fs = std::filesystem;

namespace {

constexpr size_t kTarBlock = 512;

bool looks_like_elf(std::string_view bytes) {
  return bytes.size() >= 4 && bytes.substr(0, 4) == std::string_view(
                                                        "\x7f"
                                                        "ELF",
                                                        4);
}

// POSIX ustar and GNU tar both carry "ustar" at offset 257 of the first header.
bool looks_like_tar(std::string_view bytes) {
  return bytes.size() >= kTarBlock && bytes.substr(257, 5) == "ustar";
}

// Checks that a shared object's headers and every segment lie inside its bytes. The dynamic
// loader maps segments without such checks, and touching a page past the end of the file
// kills the process with SIGBUS.
void check_elf_layout(std::string_view bytes, const std::string& what) {
  Elf64_Ehdr header;
  if (bytes.size() < sizeof(header)) throw_error(what, ": truncated ELF header");
  std::memcpy(&header, bytes.data(), sizeof(header));
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
    throw_error(what, ": not a 64-bit little-endian ELF file");
  if (header.e_type != ET_DYN) throw_error(what, ": not an ELF shared object");
  auto fits = [&](uint64_t offset, uint64_t count, uint64_t size) {
    if (size != 0 && count > (uint64_t(-1) - offset) / size) return false;
    return offset + count * size <= bytes.size();
  };
  if (header.e_phentsize != sizeof(Elf64_Phdr) ||
      !fits(header.e_phoff, header.e_phnum, sizeof(Elf64_Phdr)))
    throw_error(what, ": truncated or corrupt ELF program headers");
  if (header.e_shnum != 0 && (header.e_shentsize != sizeof(Elf64_Shdr) ||
                              !fits(header.e_shoff, header.e_shnum, sizeof(Elf64_Shdr))))
    throw_error(what, ": truncated or corrupt ELF section headers");
  for (uint16_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    std::memcpy(&segment, bytes.data() + header.e_phoff + i * sizeof(Elf64_Phdr), sizeof(segment));
    if (!fits(segment.p_offset, 1, segment.p_filesz))
      throw_error(what, ": truncated ELF file (segment ", i, " ends past the end of the file)");
  }
}

// A private directory (mode 0700) removed with everything in it when the object goes.
class PrivateTempDir {
 public:
  PrivateTempDir() {
    std::string pattern = (fs::temp_directory_path() / "anvil-package-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throw_error("cannot create a temporary directory in ",
                  detail::quoted(fs::temp_directory_path()), ": ", std::strerror(errno));
    path_ = pattern;
  }
  ~PrivateTempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  PrivateTempDir(const PrivateTempDir&) = delete;
  PrivateTempDir& operator=(const PrivateTempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The members of a .tar package that anvil reads, by name.
struct TarMembers {
  std::map<std::string, std::string> files;
  bool is_vm = false;  // mod.vm and no mod.json
};

TarMembers read_tar_members(const std::string& bytes, const std::string& what) {
  std::unique_ptr<archive, int (*)(archive*)> reader(archive_read_new(), archive_read_free);
  if (!reader) throw_error(what, ": out of memory opening the archive");
  archive_read_support_format_tar(reader.get());
  if (archive_read_open_memory(reader.get(), bytes.data(), bytes.size()) != ARCHIVE_OK)
    throw_error(what, ": not a readable tar archive: ", archive_error_string(reader.get()));
  auto archive_error = [&](const char* doing) {
    const char* reason = archive_error_string(reader.get());
    throw_error(what, ": corrupt tar archive (", doing, "): ", reason ? reason : "unknown error");
  };
  TarMembers members;
  bool vm_member_bad = false;  // mod.vm repeated or not a regular file
  while (true) {
    archive_entry* entry = nullptr;
    int status = archive_read_next_header(reader.get(), &entry);
    if (status == ARCHIVE_EOF) break;
    if (status != ARCHIVE_OK && status != ARCHIVE_WARN) archive_error("reading a member header");
    const char* raw_name = archive_entry_pathname(entry);
    std::string name = raw_name ? raw_name : "";
    while (name.starts_with("./")) name.erase(0, 2);
    if (name != "mod.so" && name != "mod.json" && name != "mod.params" && name != "mod.vm")
      continue;
    // A graph package ignores mod.vm as it ignores any other member; it only matters (and
    // must be sound) when the package turns out to be a VM package.
    if (name == "mod.vm" && (vm_member_bad || members.files.count(name))) {
      vm_member_bad = true;
      continue;
    }
    if (archive_entry_filetype(entry) != AE_IFREG) {
      if (name == "mod.vm") {
        vm_member_bad = true;
        continue;
      }
      throw_error(what, ": member ", name, " is not a regular file");
    }
    if (members.files.count(name)) throw_error(what, ": member ", name, " appears twice");
    la_int64_t size = archive_entry_size(entry);
    // A header cannot honestly declare more data than the archive holds.
    if (size < 0 || uint64_t(size) > bytes.size())
      throw_error(what, ": member ", name, " declares ", int64_t(size),
                  " bytes, but the archive has ", bytes.size());
    std::string data(size_t(size), '\0');
    size_t done = 0;
    while (done < data.size()) {
      la_ssize_t got = archive_read_data(reader.get(), data.data() + done, data.size() - done);
      if (got < 0) archive_error(("reading member " + name).c_str());
      if (got == 0) throw_error(what, ": member ", name, " is truncated");
      done += size_t(got);
    }
    members.files.emplace(name, std::move(data));
  }
  members.is_vm =
      !members.files.count("mod.json") && (members.files.count("mod.vm") || vm_member_bad);
  if (members.is_vm) {
    if (vm_member_bad) throw_error(what, ": member mod.vm appears twice or is not a regular file");
    if (!members.files.count("mod.so")) throw_error(what, ": the archive has no member mod.so");
    return members;
  }
  for (const char* required : {"mod.json", "mod.so", "mod.params"})
    if (!members.files.count(required)) throw_error(what, ": the archive has no member ", required);
  return members;
}

// The same functions under the package's name, so that messages name the package rather
// than the temporary file the library was loaded from.
Module renamed(const Module& lib, const std::string& name) {
  Module module = Module::create(name);
  for (const std::string& f : lib.function_names()) module.add_function(f, lib.function(f));
  return module;
}

// Checks that the graph parses, every kernel it calls exists and every param matches an
// input; `graph_what` names the graph JSON in messages.
void validate_package(const Package& package, const std::string& what,
                      const std::string& graph_what) {
  detail::GraphSpec spec = detail::parse_graph_json(package.graph_json, graph_what);
  for (size_t n = 0; n < spec.nodes.size(); ++n) {
    const detail::GraphNode& node = spec.nodes[n];
    if (node.is_input || node.func_name == detail::kGraphCopyFunc ||
        node.func_name == detail::kGraphNopFunc)
      continue;
    if (!package.lib.get_function(node.func_name) && !find_global(node.func_name))
      throw_error(graph_what, ": ", detail::describe_node(spec, int(n)), " calls '",
                  detail::printable(node.func_name),
                  "', which neither the kernel library nor the global registry has");
  }
  std::map<std::string, int> inputs;
  for (int node : spec.arg_nodes) inputs.emplace(spec.nodes[size_t(node)].name, node);
  for (const auto& [name, value] : package.params) {
    auto it = inputs.find(name);
    if (it == inputs.end())
      throw_error(what, ": param '", detail::printable(name), "' is not an input of the graph");
    const detail::GraphEntry& entry = spec.entries[size_t(spec.node_row_ptr[size_t(it->second)])];
    bool same_shape = std::equal(entry.shape.begin(), entry.shape.end(), value.shape().begin(),
                                 value.shape().end());
    if (!same_shape || entry.dtype != value.dtype())
      throw_error(what, ": param '", detail::printable(name), "' is ",
                  shape_to_string(value.shape()), " ", value.dtype().to_string(),
                  ", but the graph's input is ", shape_to_string(entry.shape), " ",
                  entry.dtype.to_string());
  }
}

// The kernel library of a .tar package (its mod.so member), checked, extracted and loaded.
Module load_tar_library(const std::string& path, const std::string& library,
                        const std::string& what) {
  if (!looks_like_elf(library)) throw_error(what, ": mod.so is not an ELF shared object");
  check_elf_layout(library, what + ": mod.so");
  PrivateTempDir dir;
  fs::path so_path = dir.path() / "mod.so";
  {
    std::ofstream out(so_path, std::ios::binary);
    out.write(library.data(), std::streamsize(library.size()));
    if (!out.flush()) throw_error(what, ": cannot extract mod.so to ", detail::quoted(dir.path()));
  }
  // The mapping stays valid after the file and directory are gone.
  try {
    return renamed(Module::load_shared(so_path.string()), path);
  } catch (const Error& e) {
    throw_error(what, ": mod.so: ", e.what());
  }
}

Package load_tar_package(const std::string& path, const std::string& bytes,
                         const std::string& what) {
  TarMembers members = read_tar_members(bytes, what);
  Package package;
  if (members.is_vm) {
    // The executable's kernels and runtime functions are looked up as it loads, so the
    // library comes first; load_executable checks everything else.
    package.lib = load_tar_library(path, members.files["mod.so"], what);
    package.vm_executable = std::make_shared<const vm::Executable>(
        vm::load_executable(members.files["mod.vm"], package.lib, what + ": mod.vm"));
    return package;
  }
  package.graph_json = std::move(members.files["mod.json"]);
  // Graph and params are checked before any code is loaded; kernels are checked after.
  detail::parse_graph_json(package.graph_json, what + ": mod.json");
  package.params = load_params(members.files["mod.params"], what + ": mod.params");
  package.lib = load_tar_library(path, members.files["mod.so"], what);
  validate_package(package, what, what + ": mod.json");
  return package;
}

// The size of the object a symbol names, from its ELF symbol table entry.
size_t symbol_size(const void* address) {
  Dl_info info;
  void* entry = nullptr;
  if (!dladdr1(address, &info, &entry, RTLD_DL_SYMENT) || !entry) return 0;
  const auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  return size_t(symbol->st_size);
}

Package load_shared_package(const std::string& path, const std::string& bytes,
                            const std::string& what) {
  check_elf_layout(bytes, what);
  Package package;
  try {
    package.lib = Module::load_shared(path);
  } catch (const Error& e) {
    throw_error(what, ": ", e.what());
  }
  // Module::load_shared holds its own handle; this one only reads the data symbols and is
  // closed again, leaving the library mapped.
  std::string absolute = fs::absolute(path).string();
  std::unique_ptr<void, int (*)(void*)> handle(dlopen(absolute.c_str(), RTLD_NOW | RTLD_LOCAL),
                                               dlclose);
  if (!handle) throw_error(what, ": cannot reopen: ", dlerror());
  auto find = [&](const char* symbol) {
    void* address = dlsym(handle.get(), symbol);
    if (!address)
      throw_error(what, ": a kernel library, not a package: symbol '", symbol, "' not found");
    return static_cast<const char*>(address);
  };
  const char* json = find(ANVIL_PACKAGE_GRAPH_JSON_SYMBOL);
  const char* params = find(ANVIL_PACKAGE_PARAMS_SYMBOL);
  uint64_t params_size = 0;
  std::memcpy(&params_size, find(ANVIL_PACKAGE_PARAMS_SIZE_SYMBOL), sizeof(params_size));
  size_t json_capacity = symbol_size(json);
  size_t json_length = strnlen(json, json_capacity);
  if (json_capacity == 0 || json_length == json_capacity)
    throw_error(what, ": the graph JSON symbol is not NUL-terminated");
  if (params_size > symbol_size(params))
    throw_error(what, ": the params size symbol says ", params_size, " bytes, but the params ",
                "symbol holds ", symbol_size(params));
  package.graph_json.assign(json, json_length);
  package.params = load_params(std::string_view(params, size_t(params_size)), what + ": params");
  validate_package(package, what, what + ": graph JSON");
  return package;
}

}  // namespace

GraphExecutor Package::create_executor(Device device) const {
  if (is_vm())
    throw_error("create_executor: this package holds a VM executable (mod.vm); use create_vm");
  GraphExecutor executor(graph_json, lib, device);
  executor.load_params(params);
  return executor;
}

VirtualMachine Package::create_vm(Device device) const {
  if (!is_vm())
    throw_error(
        "create_vm: this package holds a graph (mod.json), not a VM executable; use "
        "create_executor");
  return VirtualMachine(vm_executable, device);
}

Package load_module(const std::string& path) {
  std::string what = "package " + detail::quoted(path);
  std::string bytes = detail::read_file_bytes(path, what);
  if (looks_like_elf(bytes)) return load_shared_package(path, bytes, what);
  if (looks_like_tar(bytes)) return load_tar_package(path, bytes, what);
  throw_error(what, ": not a package (neither a tar archive nor an ELF shared object)");
}

}  // namespace anvil
