// The graph executor: storage from the graph's plan, node entries as views into it, and one
// precomputed argument array per kernel node, so that run() only calls functions.
#include "anvil/runtime/graph_executor.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>

#include "anvil/runtime/params.h"
#include "anvil/support/error.h"
#include "runtime/binary_io.h"
#include "runtime/graph_executor_spec.h"

namespace anvil {

namespace {

using detail::GraphSpec;

// A view of `storage` with its own shape and dtype at a byte offset; it keeps the storage alive,
// so an output handed to the caller stays valid after the executor is gone.
Tensor storage_view(const Tensor& storage, int64_t offset, const std::vector<int64_t>& shape,
                    DataType dtype) {
  auto* managed = new DLManagedTensor{};
  managed->dl_tensor.data = static_cast<uint8_t*>(storage.data()) + offset;
  managed->dl_tensor.device = storage.dl_tensor().device;
  managed->dl_tensor.ndim = int32_t(shape.size());
  managed->dl_tensor.dtype = dtype.to_dlpack();
  managed->dl_tensor.shape = const_cast<int64_t*>(shape.data());
  managed->manager_ctx = new Tensor(storage);
  managed->deleter = [](DLManagedTensor* self) {
    delete static_cast<Tensor*>(self->manager_ctx);
    delete self;
  };
  // from_dlpack copies the shape, so pointing at the caller's vector is fine.
  return Tensor::from_dlpack(managed);
}

// The "__copy" kernel: its one input into its one output (same byte size, checked by the
// graph parser).
Value copy_kernel(const PackedArgs& args) {
  const Tensor& from = args[0].as_tensor();
  const Tensor& to = args[1].as_tensor();
  std::memcpy(to.data(), from.data(), size_t(to.nbytes()));
  return Value();
}

// "(1, 3) float32".
std::string describe_type(std::span<const int64_t> shape, DataType dtype) {
  return shape_to_string(shape) + " " + dtype.to_string();
}

double elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

// One kernel node ready to call.
struct KernelCall {
  int node = 0;
  PackedFunc func;
  std::vector<Value> args;  // inputs then outputs
};

class GraphExecutor::Impl {
 public:
  Impl(const std::string& graph_json, Module lib, Device device)
      : spec_(detail::parse_graph_json(graph_json, "graph JSON")), lib_(std::move(lib)) {
    if (device != Device::cpu())
      throw_error("the graph executor runs on the CPU only, not on ", device.to_string());
    allocate_storage();
    prepare_calls();
    for (size_t i = 0; i < spec_.arg_nodes.size(); ++i)
      input_position_.emplace(spec_.nodes[size_t(spec_.arg_nodes[i])].name, int(i));
    is_param_.assign(spec_.arg_nodes.size(), false);
    order_inputs();
  }

  void run() {
    for (const KernelCall& call : calls_) invoke(call);
  }

  int input_position(std::string_view name) const {
    auto it = input_position_.find(name);
    return it == input_position_.end() ? -1 : it->second;
  }

  // The arg_nodes position of input `index` in the order of get_input_index.
  int position_of_index(int index) const {
    if (index < 0 || size_t(index) >= ordered_inputs_.size())
      throw_error("input index ", index, " is out of range: the graph has ", ordered_inputs_.size(),
                  " inputs (params included)");
    return ordered_inputs_[size_t(index)];
  }

  int index_of_position(int position) const {
    auto it = std::find(ordered_inputs_.begin(), ordered_inputs_.end(), position);
    return int(it - ordered_inputs_.begin());
  }

  int position_by_name(std::string_view name) const {
    int position = input_position(name);
    if (position < 0) throw_error("the graph has no input named '", detail::printable(name), "'");
    return position;
  }

  int input_entry(int position) const {
    return spec_.node_row_ptr[size_t(spec_.arg_nodes[size_t(position)])];
  }
  const std::string& input_name(int position) const {
    return spec_.nodes[size_t(spec_.arg_nodes[size_t(position)])].name;
  }

  void check_input_value(int position, const Tensor& value, const char* what) const {
    const detail::GraphEntry& entry = spec_.entries[size_t(input_entry(position))];
    if (!value.defined())
      throw_error(what, ": no tensor given for input '", input_name(position), "'");
    bool same_shape = std::equal(entry.shape.begin(), entry.shape.end(), value.shape().begin(),
                                 value.shape().end());
    if (!same_shape || value.dtype() != entry.dtype)
      throw_error(what, ": input '", detail::printable(input_name(position)), "' expects ",
                  describe_type(entry.shape, entry.dtype), ", got ",
                  describe_type(value.shape(), value.dtype()));
    if (value.device() != Device::cpu())
      throw_error(what, ": input '", detail::printable(input_name(position)),
                  "' must be a CPU tensor, got one on ", value.device().to_string());
  }

  void set_input(int position, const Tensor& value) {
    check_input_value(position, value, "set_input");
    int entry = input_entry(position);
    // A copy ends any zero-copy binding: the value lands in executor storage again.
    if (!entry_tensors_[size_t(entry)].same_as(own_entry_tensors_[size_t(entry)]))
      bind_entry(entry, own_entry_tensors_[size_t(entry)]);
    entry_tensors_[size_t(entry)].copy_from(value);
  }

  void set_input_zero_copy(int position, const Tensor& value) {
    check_input_value(position, value, "set_input_zero_copy");
    if (!value.is_contiguous())
      throw_error("set_input_zero_copy: input '", detail::printable(input_name(position)),
                  "' needs a compact tensor");
    if (reinterpret_cast<uintptr_t>(value.data()) % Tensor::kAlignment != 0)
      throw_error("set_input_zero_copy: input '", detail::printable(input_name(position)),
                  "' needs data aligned to ", Tensor::kAlignment, " bytes");
    bind_entry(input_entry(position), value);
  }

  void load_params(const std::vector<std::pair<std::string, Tensor>>& params) {
    // Check everything first so that a bad set changes nothing.
    std::vector<int> positions;
    for (const auto& [name, value] : params) {
      int position = input_position(name);
      if (position < 0)
        throw_error("load_params: param '", detail::printable(name),
                    "' is not an input of the graph");
      check_input_value(position, value, "load_params");
      positions.push_back(position);
    }
    for (size_t i = 0; i < params.size(); ++i) {
      set_input(positions[i], params[i].second);
      is_param_[size_t(positions[i])] = true;
    }
    order_inputs();
  }

  Tensor input_tensor(int position) const { return entry_tensors_[size_t(input_entry(position))]; }

  Tensor output(int index) const {
    if (index < 0 || size_t(index) >= spec_.heads.size())
      throw_error("output index ", index, " is out of range: the graph has ", spec_.heads.size(),
                  " outputs");
    return entry_tensors_[size_t(spec_.entry_id(spec_.heads[size_t(index)]))];
  }

  int num_inputs() const { return num_plain_inputs_; }
  int num_outputs() const { return int(spec_.heads.size()); }

  std::vector<InputInfo> input_info() const {
    std::vector<InputInfo> info;
    for (int i = 0; i < num_plain_inputs_; ++i) {
      int position = ordered_inputs_[size_t(i)];
      const detail::GraphEntry& entry = spec_.entries[size_t(input_entry(position))];
      info.push_back(InputInfo{input_name(position), entry.shape, entry.dtype});
    }
    return info;
  }

  BenchmarkResult benchmark(int repeat, int number) {
    return benchmark_function([this] { run(); }, repeat, number);
  }

  std::vector<KernelProfile> profile(int repeat, double* run_mean_ms) {
    if (repeat < 1) throw_error("profile: repeat must be at least 1, got ", repeat);
    run();
    std::vector<double> total_ms(calls_.size(), 0.0);
    double run_total_ms = 0;
    for (int r = 0; r < repeat; ++r) {
      if (run_mean_ms) {
        auto start = std::chrono::steady_clock::now();
        run();
        run_total_ms += elapsed_ms(start);
      }
      for (size_t i = 0; i < calls_.size(); ++i) {
        auto start = std::chrono::steady_clock::now();
        invoke(calls_[i]);
        total_ms[i] += elapsed_ms(start);
      }
    }
    if (run_mean_ms) *run_mean_ms = run_total_ms / repeat;
    std::vector<KernelProfile> rows;
    for (size_t i = 0; i < calls_.size(); ++i) {
      const detail::GraphNode& node = spec_.nodes[size_t(calls_[i].node)];
      rows.push_back(KernelProfile{node.name, node.func_name, total_ms[i] / repeat, 0.0,
                                   node.fused_ops, node.flops, node.schedule,
                                   node.schedule_refused});
    }
    rank_kernel_profile(rows);
    return rows;
  }

  GraphMemoryUse memory_use() const {
    enum Kind { kActivation, kInputOrOutput, kParam };
    std::vector<Kind> kind(storage_.size(), kActivation);
    auto mark = [&](int entry, Kind k) {
      Kind& current = kind[size_t(spec_.entries[size_t(entry)].storage_id)];
      current = std::max(current, k);
    };
    for (size_t position = 0; position < spec_.arg_nodes.size(); ++position)
      mark(input_entry(int(position)), is_param_[position] ? kParam : kInputOrOutput);
    for (detail::GraphEntryRef head : spec_.heads) mark(spec_.entry_id(head), kInputOrOutput);
    GraphMemoryUse use;
    use.largest_live_set = spec_.largest_live_set;
    if (arena_.defined()) use.activation_bytes += arena_.nbytes();
    for (size_t id = 0; id < storage_.size(); ++id) {
      if (!storage_[id].defined()) continue;  // every entry of the slot is in the arena
      int64_t bytes = storage_[id].nbytes();
      (kind[id] == kParam        ? use.param_bytes
       : kind[id] == kActivation ? use.activation_bytes
                                 : use.io_bytes) += bytes;
    }
    return use;
  }

 private:
  void invoke(const KernelCall& call) const {
    try {
      call.func.call(call.args);
    } catch (const Error& e) {
      throw_error(detail::describe_node(spec_, call.node), " (kernel '",
                  detail::printable(spec_.nodes[size_t(call.node)].func_name), "'): ", e.what());
    }
  }

  // One buffer per storage slot that an entry outside the arena uses, and the arena.
  void allocate_storage() {
    std::vector<int64_t> storage_bytes(size_t(spec_.num_storage), -1);
    bool any_in_arena = false;
    for (const detail::GraphEntry& entry : spec_.entries) {
      any_in_arena |= entry.arena_offset >= 0;
      if (entry.arena_offset < 0)
        storage_bytes[size_t(entry.storage_id)] =
            std::max(storage_bytes[size_t(entry.storage_id)], entry.nbytes);
    }
    storage_.resize(storage_bytes.size());
    for (size_t id = 0; id < storage_bytes.size(); ++id)
      if (storage_bytes[id] >= 0)
        storage_[id] = Tensor::empty({storage_bytes[id]}, DataType::uint8());
    if (any_in_arena) arena_ = Tensor::empty({spec_.arena_bytes}, DataType::uint8());
    for (const detail::GraphEntry& entry : spec_.entries)
      own_entry_tensors_.push_back(
          entry.arena_offset >= 0
              ? storage_view(arena_, entry.arena_offset, entry.shape, entry.dtype)
              : storage_view(storage_[size_t(entry.storage_id)], 0, entry.shape, entry.dtype));
    entry_tensors_ = own_entry_tensors_;
    entry_readers_.resize(spec_.entries.size());
  }

  PackedFunc resolve(int node_index) const {
    const detail::GraphNode& node = spec_.nodes[size_t(node_index)];
    if (node.func_name == detail::kGraphCopyFunc)
      return PackedFunc(copy_kernel, std::string(detail::kGraphCopyFunc));
    if (lib_.defined())
      if (std::optional<PackedFunc> f = lib_.get_function(node.func_name)) return *f;
    if (std::optional<PackedFunc> f = find_global(node.func_name)) return *f;
    throw_error("graph JSON: ", detail::describe_node(spec_, node_index), " calls '",
                detail::printable(node.func_name), "', which neither the kernel library",
                lib_.defined() ? " '" + lib_.name() + "'" : std::string(),
                " nor the global registry has");
  }

  void prepare_calls() {
    for (size_t n = 0; n < spec_.nodes.size(); ++n) {
      const detail::GraphNode& node = spec_.nodes[n];
      if (node.is_input || node.func_name == detail::kGraphNopFunc) continue;
      KernelCall call;
      call.node = int(n);
      call.func = resolve(int(n));
      std::vector<int> entries;
      for (detail::GraphEntryRef ref : node.inputs) entries.push_back(spec_.entry_id(ref));
      for (int i = 0; i < node.num_outputs; ++i) entries.push_back(spec_.node_row_ptr[n] + i);
      for (size_t a = 0; a < entries.size(); ++a) {
        call.args.emplace_back(entry_tensors_[size_t(entries[a])]);
        entry_readers_[size_t(entries[a])].push_back({int(calls_.size()), int(a)});
      }
      calls_.push_back(std::move(call));
    }
  }

  // Points entry (and every argument slot that passes it) at tensor.
  void bind_entry(int entry, const Tensor& tensor) {
    entry_tensors_[size_t(entry)] = tensor;
    for (auto [call, arg] : entry_readers_[size_t(entry)])
      calls_[size_t(call)].args[size_t(arg)] = Value(tensor);
  }

  // Plain inputs first, then params, each in arg_nodes order.
  void order_inputs() {
    ordered_inputs_.clear();
    for (int pass = 0; pass < 2; ++pass)
      for (size_t i = 0; i < is_param_.size(); ++i)
        if (is_param_[i] == (pass == 1)) ordered_inputs_.push_back(int(i));
    num_plain_inputs_ = int(std::count(is_param_.begin(), is_param_.end(), false));
  }

  GraphSpec spec_;
  Module lib_;
  std::vector<Tensor> storage_;            // per slot; undefined where every entry is in the arena
  Tensor arena_;                           // the activations placed by "arena_offset", if any
  std::vector<Tensor> own_entry_tensors_;  // views of storage_ or arena_
  std::vector<Tensor> entry_tensors_;      // what each entry currently is (zero-copy inputs)
  std::vector<std::vector<std::pair<int, int>>> entry_readers_;  // (call, arg) slots per entry
  std::vector<KernelCall> calls_;
  std::map<std::string, int, std::less<>> input_position_;  // name -> arg_nodes position
  std::vector<bool> is_param_;                              // per arg_nodes position
  std::vector<int> ordered_inputs_;                         // index -> arg_nodes position
  int num_plain_inputs_ = 0;
};

void rank_kernel_profile(std::vector<KernelProfile>& rows) {
  double sum = 0;
  for (const KernelProfile& row : rows) sum += row.mean_ms;
  for (KernelProfile& row : rows) row.percent = sum > 0 ? 100.0 * row.mean_ms / sum : 0.0;
  std::stable_sort(rows.begin(), rows.end(), [](const KernelProfile& a, const KernelProfile& b) {
    return a.mean_ms > b.mean_ms;
  });
}

BenchmarkResult benchmark_function(const std::function<void()>& run, int repeat, int number) {
  if (repeat < 1 || number < 1)
    throw_error("benchmark: repeat and number must be at least 1, got ", repeat, " and ", number);
  run();  // warm-up: first-touch page faults, caches, workspace pools
  BenchmarkResult result;
  for (int r = 0; r < repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    for (int n = 0; n < number; ++n) run();
    result.results_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count() /
        number);
  }
  std::vector<double> sorted = result.results_ms;
  std::sort(sorted.begin(), sorted.end());
  size_t count = sorted.size();
  result.min_ms = sorted.front();
  result.max_ms = sorted.back();
  result.median_ms =
      count % 2 ? sorted[count / 2] : (sorted[count / 2 - 1] + sorted[count / 2]) / 2;
  double sum = 0;
  for (double v : sorted) sum += v;
  result.mean_ms = sum / double(count);
  double squares = 0;
  for (double v : sorted) squares += (v - result.mean_ms) * (v - result.mean_ms);
  result.std_ms = std::sqrt(squares / double(count));
  return result;
}

GraphExecutor::GraphExecutor(const std::string& graph_json, Module lib, Device device)
    : impl_(std::make_unique<Impl>(graph_json, std::move(lib), device)) {}
GraphExecutor::~GraphExecutor() = default;
GraphExecutor::GraphExecutor(GraphExecutor&&) noexcept = default;
GraphExecutor& GraphExecutor::operator=(GraphExecutor&&) noexcept = default;

void GraphExecutor::set_input(std::string_view name, const Tensor& value) {
  impl_->set_input(impl_->position_by_name(name), value);
}
void GraphExecutor::set_input(int index, const Tensor& value) {
  impl_->set_input(impl_->position_of_index(index), value);
}
void GraphExecutor::set_input_zero_copy(std::string_view name, const Tensor& value) {
  impl_->set_input_zero_copy(impl_->position_by_name(name), value);
}
void GraphExecutor::load_params(std::string_view params_bytes) {
  impl_->load_params(anvil::load_params(params_bytes, "params blob"));
}
void GraphExecutor::load_params(const std::vector<std::pair<std::string, Tensor>>& params) {
  impl_->load_params(params);
}
void GraphExecutor::run() { impl_->run(); }
Tensor GraphExecutor::get_output(int index) const { return impl_->output(index); }
Tensor GraphExecutor::get_input(int index) const {
  return impl_->input_tensor(impl_->position_of_index(index));
}
int GraphExecutor::get_input_index(std::string_view name) const {
  int position = impl_->input_position(name);
  return position < 0 ? -1 : impl_->index_of_position(position);
}
int GraphExecutor::get_num_inputs() const { return impl_->num_inputs(); }
int GraphExecutor::get_num_outputs() const { return impl_->num_outputs(); }
std::vector<InputInfo> GraphExecutor::get_input_info() const { return impl_->input_info(); }
BenchmarkResult GraphExecutor::benchmark(int repeat, int number) {
  return impl_->benchmark(repeat, number);
}
std::vector<KernelProfile> GraphExecutor::profile(int repeat, double* run_mean_ms) {
  return impl_->profile(repeat, run_mean_ms);
}
GraphMemoryUse GraphExecutor::memory_use() const { return impl_->memory_use(); }

}  // namespace anvil
