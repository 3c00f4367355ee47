#include "run_report.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>

#include "anvil/runtime/thread_pool.h"

namespace anvil::cli {
namespace {

// text centred in width columns, the extra column on the right (Python's "{:^12}").
std::string centred(const std::string& text, size_t width) {
  if (text.size() >= width) return text;
  size_t left = (width - text.size()) / 2;
  return std::string(left, ' ') + text + std::string(width - text.size() - left, ' ');
}

std::string fixed4(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.4f", v);
  return buffer;
}

}  // namespace

void print_time_summary(const BenchmarkResult& r) {
  std::string header, numbers;
  const char* names[] = {"mean (ms)", "median (ms)", "max (ms)", "min (ms)", "std (ms)"};
  const double values[] = {r.mean_ms, r.median_ms, r.max_ms, r.min_ms, r.std_ms};
  for (int i = 0; i < 5; ++i) {
    header += (i ? " " : "") + centred(names[i], 12);
    numbers += (i ? " " : "") + centred(fixed4(values[i]), 12);
  }
  std::printf("Execution time summary:\n%s\n%s\n", header.c_str(), numbers.c_str());
}

void print_top(const Tensor& output, int n) {
  const int64_t count = output.numel();
  std::vector<int64_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), 0);
  const size_t k = size_t(std::min<int64_t>(n, count));
  std::vector<double> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) values[size_t(i)] = output.get_as_double(i);
  std::partial_sort(order.begin(), order.begin() + ptrdiff_t(k), order.end(),
                    [&](int64_t a, int64_t b) {
                      return values[size_t(a)] > values[size_t(b)] ||
                             (values[size_t(a)] == values[size_t(b)] && a < b);
                    });
  std::printf("Top %zu of output_0:\n%6s %8s %14s\n", k, "rank", "index", "score");
  for (size_t i = 0; i < k; ++i)
    std::printf("%6zu %8lld %14.6f\n", i + 1, static_cast<long long>(order[i]),
                values[size_t(order[i])]);
}

// The precision a kernel computes its products in, from its ops: the bf16 convolution, the
// int8 (qnn) ones, float32 otherwise.
const char* kernel_precision(const KernelProfile& row) {
  if (row.fused_ops.find("_bf16") != std::string::npos) return "bf16";
  if (row.fused_ops.find("qnn.") != std::string::npos) return "int8";
  return "fp32";
}

void print_profile(const std::vector<KernelProfile>& rows, double run_ms, double peak_gflops,
                   double bf16_peak_gflops) {
  double kernels_ms = 0;
  for (const KernelProfile& row : rows) kernels_ms += row.mean_ms;
  std::printf("%-40s %-36s %10s %8s %9s %7s %9s\n", "kernel", "fused ops", "mean (ms)", "percent",
              "GFLOP/s", "% peak", "precision");
  for (const KernelProfile& row : rows) {
    std::string ops = row.fused_ops.empty() ? "-" : row.fused_ops;
    if (ops.size() > 36) ops = ops.substr(0, 33) + "...";
    std::string gflops = "-", share = "-";
    if (row.flops > 0 && row.mean_ms > 0) {
      const double rate = double(row.flops) / (row.mean_ms * 1e6);
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.1f", rate);
      gflops = buffer;
      // A bf16 kernel's share is of the bf16 peak of the host's bf16 unit (AMX tiles, or
      // vdpbf16ps), not of the FP32 one.
      const double peak = std::string(kernel_precision(row)) == "bf16" && bf16_peak_gflops > 0
                              ? bf16_peak_gflops
                              : peak_gflops;
      if (peak > 0) {
        std::snprintf(buffer, sizeof buffer, "%.1f%%", 100.0 * rate / peak);
        share = buffer;
      }
    }
    std::printf("%-40s %-36s %10.4f %7.2f%% %9s %7s %9s\n", row.node_name.c_str(), ops.c_str(),
                row.mean_ms, row.percent, gflops.c_str(), share.c_str(), kernel_precision(row));
  }
  if (peak_gflops > 0)
    std::printf("peak: %.1f GFLOP/s (FP32, measured on %d threads)\n", peak_gflops, num_threads());
  if (bf16_peak_gflops > 0)
    std::printf("peak: %.1f GFLOP/s (BF16, measured on %d threads)\n", bf16_peak_gflops,
                num_threads());
  std::printf("kernels: %.4f ms of a %.4f ms run (%.1f%%)\n", kernels_ms, run_ms,
              run_ms > 0 ? 100.0 * kernels_ms / run_ms : 0.0);
  // Which schedule strategy compiled each kernel, and why a strategy declined, in the same
  // order (a separate list: a decline's reason is a sentence, not a column).
  bool any = false;
  for (const KernelProfile& row : rows) any |= !row.schedule.empty();
  if (!any) return;
  std::printf("schedules:\n");
  for (const KernelProfile& row : rows) {
    std::printf("  %-40s %s\n", row.node_name.c_str(),
                row.schedule.empty() ? "-" : row.schedule.c_str());
    // The optional steps the schedule tried and was refused: a fallback is never silent.
    if (!row.schedule_refused.empty())
      std::printf("  %-40s refused: %s\n", "", row.schedule_refused.c_str());
  }
}

std::string binary_bytes(int64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = double(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.1f %s", value, units[unit]);
  return buffer;
}

void print_memory(const GraphMemoryUse& use) {
  std::string line = "memory: activations " + binary_bytes(use.activation_bytes) + " planned";
  if (use.largest_live_set >= 0) {
    line += ", largest live set " + binary_bytes(use.largest_live_set);
    if (use.largest_live_set > 0) {
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, " (%.2fx)",
                    double(use.activation_bytes) / double(use.largest_live_set));
      line += ratio;
    }
  }
  line += ", params " + binary_bytes(use.param_bytes) + ", inputs and outputs " +
          binary_bytes(use.io_bytes);
  std::printf("%s\n", line.c_str());
}

void print_memory(const VmMemoryUse& use) {
  std::printf("memory: activations %s in %lld buffers, reused for %s allocated\n",
              binary_bytes(use.arena_bytes).c_str(), static_cast<long long>(use.arena_buffers),
              binary_bytes(use.allocated_bytes).c_str());
}

}  // namespace anvil::cli
