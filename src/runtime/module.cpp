#include "anvil/runtime/module.h"

#include <dlfcn.h>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "anvil/runtime/c_abi.h"
#include "anvil/support/error.h"

namespace anvil {

namespace {

// A dlopen handle, closed when the last module or function using it goes.
struct SharedLibrary {
  SharedLibrary(void* handle_, std::string path_) : handle(handle_), path(std::move(path_)) {}
  ~SharedLibrary() { dlclose(handle); }
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  void* const handle;
  const std::string path;  // as the caller gave it, for messages
};

// Arguments up to this count are converted on the stack; calls with more allocate.
constexpr size_t kInlineArgs = 16;

int64_t pack_dtype(DataType t) {
  return int64_t(t.code) | int64_t(t.bits) << 8 | int64_t(t.lanes) << 16;
}

DataType unpack_dtype(int64_t packed) {
  return DataType(uint8_t(packed & 0xff), uint8_t((packed >> 8) & 0xff),
                  uint16_t((packed >> 16) & 0xffff));
}

void to_c_value(const PackedArgs& args, size_t i, AnvilValue& out, int32_t& code) {
  const Value& v = args[i];
  out.v_int64 = 0;
  switch (v.kind()) {
    case ValueKind::Null:
      code = kAnvilNull;
      return;
    case ValueKind::Int:
    case ValueKind::Bool:
      out.v_int64 = v.as_int();
      code = kAnvilInt;
      return;
    case ValueKind::Float:
      out.v_float64 = v.as_float();
      code = kAnvilFloat;
      return;
    case ValueKind::String:
      out.v_str = v.as_string().c_str();
      code = kAnvilStr;
      return;
    case ValueKind::DataType:
      out.v_int64 = pack_dtype(v.as_dtype());
      code = kAnvilDataType;
      return;
    case ValueKind::Tensor: {
      const Tensor& t = v.as_tensor();
      if (!t.defined())
        throw_error("argument ", i, " of '", args.func_name(), "': the tensor is undefined");
      // The ABI forbids kernels to modify the DLTensor struct itself, only its data.
      out.v_handle = const_cast<DLTensor*>(&t.dl_tensor());
      code = kAnvilDLTensor;
      return;
    }
    case ValueKind::Handle:
      out.v_handle = v.as_handle();
      code = kAnvilHandle;
      return;
    case ValueKind::Func:
      break;
  }
  throw_error("argument ", i, " of '", args.func_name(), "': a ", v.kind_name(),
              " cannot be passed to a compiled kernel");
}

Value from_c_value(const AnvilValue& v, int32_t code, std::string_view func_name) {
  switch (code) {
    case kAnvilNull:
      return Value();
    case kAnvilInt:
      return Value(v.v_int64);
    case kAnvilFloat:
      return Value(v.v_float64);
    case kAnvilHandle:
      return Value(v.v_handle);
    case kAnvilStr:
      return v.v_str ? Value(std::string(v.v_str)) : Value();
    case kAnvilDataType:
      return Value(unpack_dtype(v.v_int64));
    case kAnvilDLTensor:
      throw_error("kernel '", func_name,
                  "' returned a DLTensor; kernels return results through output arguments");
    default:
      throw_error("kernel '", func_name, "' returned an unknown type code ", code);
  }
}

Value call_kernel(AnvilPackedCFunc fn, const std::string& origin, const PackedArgs& args) {
  size_t n = args.size();
  AnvilValue inline_values[kInlineArgs];
  int32_t inline_codes[kInlineArgs];
  std::vector<AnvilValue> heap_values;
  std::vector<int32_t> heap_codes;
  AnvilValue* values = inline_values;
  int32_t* codes = inline_codes;
  if (n > kInlineArgs) {
    heap_values.resize(n);
    heap_codes.resize(n);
    values = heap_values.data();
    codes = heap_codes.data();
  }
  for (size_t i = 0; i < n; ++i) to_c_value(args, i, values[i], codes[i]);

  AnvilValue ret;
  ret.v_int64 = 0;
  int32_t ret_code = kAnvilNull;
  AnvilSetLastError(nullptr);
  int32_t rc = fn(values, codes, int32_t(n), &ret, &ret_code);
  if (rc != 0) {
    std::string message = AnvilGetLastError();
    if (message.empty()) message = str_cat("error code ", rc, " (no message was set)");
    throw_error("kernel '", args.func_name(), "' in '", origin, "' failed: ", message);
  }
  return from_c_value(ret, ret_code, args.func_name());
}

const void* find_library_symbol(const SharedLibrary& library, const char* symbol) {
  dlerror();
  void* address = dlsym(library.handle, symbol);
  if (!address)
    throw_error("'", library.path, "' is not an anvil kernel library: symbol '", symbol,
                "' not found");
  return address;
}

}  // namespace

class Module::Node : public RefCounted {
 public:
  explicit Node(std::string name_) : name(std::move(name_)) {}

  const std::string name;
  std::shared_ptr<const SharedLibrary> library;  // set for modules loaded from a .so
  std::mutex mutex;
  std::map<std::string, PackedFunc, std::less<>> functions;
};

Module::Module() = default;
Module::Module(Ref<Node> node) : node_(std::move(node)) {}
Module::Module(const Module&) = default;
Module::Module(Module&&) noexcept = default;
Module& Module::operator=(const Module&) = default;
Module& Module::operator=(Module&&) noexcept = default;
Module::~Module() = default;

Module Module::create(std::string name) { return Module(make_ref<Node>(std::move(name))); }

const std::string& Module::name() const {
  ANVIL_ICHECK(node_, "name() of a null Module");
  return node_->name;
}

std::optional<PackedFunc> Module::get_function(std::string_view name) const {
  ANVIL_ICHECK(node_, "get_function on a null Module");
  std::lock_guard lock(node_->mutex);
  auto it = node_->functions.find(name);
  if (it == node_->functions.end()) return std::nullopt;
  return it->second;
}

PackedFunc Module::function(std::string_view name) const {
  std::optional<PackedFunc> func = get_function(name);
  if (!func) throw_error("module '", node_->name, "' has no function named '", name, "'");
  return *std::move(func);
}

std::vector<std::string> Module::function_names() const {
  ANVIL_ICHECK(node_, "function_names on a null Module");
  std::lock_guard lock(node_->mutex);
  std::vector<std::string> names;
  names.reserve(node_->functions.size());
  for (const auto& entry : node_->functions) names.push_back(entry.first);
  return names;
}

void Module::add_function(const std::string& name, PackedFunc func, bool override_existing) {
  ANVIL_ICHECK(node_, "add_function on a null Module");
  if (name.empty()) throw_error("module '", node_->name, "': a function needs a name");
  if (!func.defined())
    throw_error("module '", node_->name, "': cannot add a null function as '", name, "'");
  if (func.name() != name) func = func.with_name(name);
  PackedFunc replaced;  // destroyed after the lock is released
  std::lock_guard lock(node_->mutex);
  auto [it, inserted] = node_->functions.try_emplace(name, func);
  if (inserted) return;
  if (!override_existing)
    throw_error("module '", node_->name, "' already has a function named '", name, "'");
  replaced = std::exchange(it->second, std::move(func));
}

PackedFunc wrap_c_kernel(AnvilPackedCFunc fn, std::string name, std::shared_ptr<const void> owner,
                         std::string origin) {
  return PackedFunc([fn, owner = std::move(owner), origin = std::move(origin)](
                        const PackedArgs& args) { return call_kernel(fn, origin, args); },
                    std::move(name));
}

Module Module::load_shared(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) throw_error("cannot load kernel library '", path, "': no such file");
  // An absolute path keeps dlopen from searching the library path for a bare file name.
  std::string resolved = fs::absolute(path, ec).string();
  if (ec) resolved = path;
  dlerror();
  void* handle = dlopen(resolved.c_str(), RTLD_LOCAL | RTLD_NOW);
  if (!handle) {
    const char* reason = dlerror();
    throw_error("cannot load kernel library '", path, "': ", reason ? reason : "dlopen failed");
  }
  auto library = std::make_shared<const SharedLibrary>(handle, path);

  int32_t version =
      *static_cast<const int32_t*>(find_library_symbol(*library, ANVIL_LIBRARY_ABI_VERSION_SYMBOL));
  if (version != ANVIL_ABI_VERSION)
    throw_error("'", path, "' was built for anvil kernel ABI version ", version,
                ", but this runtime supports version ", ANVIL_ABI_VERSION);
  const auto* entries = static_cast<const AnvilFunctionEntry*>(
      find_library_symbol(*library, ANVIL_LIBRARY_FUNCTIONS_SYMBOL));
  int32_t count = *static_cast<const int32_t*>(
      find_library_symbol(*library, ANVIL_LIBRARY_NUM_FUNCTIONS_SYMBOL));
  constexpr int32_t kMaxFunctions = 1 << 20;
  if (count < 0 || count > kMaxFunctions)
    throw_error("'", path, "' has a malformed function table: ", count, " functions");

  auto node = make_ref<Node>(path);
  node->library = library;
  for (int32_t i = 0; i < count; ++i) {
    const AnvilFunctionEntry& entry = entries[i];
    if (!entry.name || !*entry.name || !entry.fn)
      throw_error("'", path, "' has a malformed function table: entry ", i,
                  " lacks a name or a function");
    std::string name = entry.name;
    AnvilPackedCFunc fn = entry.fn;
    PackedFunc func =
        wrap_c_kernel(fn, name, library, std::filesystem::path(path).filename().string());
    if (!node->functions.try_emplace(name, std::move(func)).second)
      throw_error("'", path, "' has a malformed function table: '", name,
                  "' appears more than once");
  }
  return Module(std::move(node));
}

}  // namespace anvil
