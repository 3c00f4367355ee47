// anvil inspect FILE: one row per tensor (name, dtype, shape, min, max, mean).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "anvil/runtime/tensor_file.h"
#include "anvil/support/error.h"
#include "commands.h"
#include "model_loading.h"

namespace anvil::cli {
namespace {

struct Summary {
  std::string min = "-", max = "-", mean = "-";
};

std::string format_real(double value) {
  if (std::isnan(value)) return "nan";
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

// Integers keep every digit (an int64 past 2^53 would not survive a double).
template <typename T>
Summary summarize_integers(const Tensor& tensor) {
  const char* data = static_cast<const char*>(tensor.data());
  T lo = 0, hi = 0;
  long double sum = 0;
  for (int64_t i = 0, n = tensor.numel(); i < n; ++i) {
    T value;
    std::memcpy(&value, data + tensor.byte_offset_of(i), sizeof(T));
    if (i == 0 || value < lo) lo = value;
    if (i == 0 || value > hi) hi = value;
    sum += static_cast<long double>(value);
  }
  return {std::to_string(lo), std::to_string(hi),
          format_real(double(sum / static_cast<long double>(tensor.numel())))};
}

Summary summarize_reals(const Tensor& tensor) {
  double lo = INFINITY, hi = -INFINITY;
  long double sum = 0;
  bool nan = false;
  for (int64_t i = 0, n = tensor.numel(); i < n; ++i) {
    double value = tensor.get_as_double(i);
    nan |= std::isnan(value);
    lo = std::min(lo, value);
    hi = std::max(hi, value);
    sum += value;
  }
  // Like numpy, one NaN makes every statistic NaN.
  if (nan) return {"nan", "nan", "nan"};
  return {format_real(lo), format_real(hi),
          format_real(double(sum / static_cast<long double>(tensor.numel())))};
}

Summary summarize(const Tensor& tensor) {
  if (tensor.numel() == 0) return {};
  DataType dtype = tensor.dtype();
  if (dtype.is_bool()) return summarize_integers<uint8_t>(tensor);
  if (dtype.is_int()) {
    if (dtype.bits == 8) return summarize_integers<int8_t>(tensor);
    if (dtype.bits == 16) return summarize_integers<int16_t>(tensor);
    if (dtype.bits == 32) return summarize_integers<int32_t>(tensor);
    return summarize_integers<int64_t>(tensor);
  }
  if (dtype.is_uint()) {
    if (dtype.bits == 8) return summarize_integers<uint8_t>(tensor);
    if (dtype.bits == 16) return summarize_integers<uint16_t>(tensor);
    if (dtype.bits == 32) return summarize_integers<uint32_t>(tensor);
    return summarize_integers<uint64_t>(tensor);
  }
  return summarize_reals(tensor);
}

// Names come from untrusted files: control bytes must not reach the terminal.
std::string displayable(const std::string& name) {
  if (name.empty()) return "''";
  std::string out;
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", c);
      out += hex;
    } else {
      out.push_back(char(c));
    }
  }
  return out;
}

void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line.append(widths[c] - row[c].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
}

}  // namespace

void print_tensor_file_summary(const std::string& path) {
  TensorFile file = read_tensor_file(path);
  int64_t total_bytes = 0;
  for (const auto& entry : file.tensors) total_bytes += entry.second.nbytes();
  size_t count = file.tensors.size();
  std::printf("%s: %s file, %zu tensor%s, %" PRId64 " bytes of data\n", path.c_str(),
              tensor_file_format_name(file.format), count, count == 1 ? "" : "s", total_bytes);
  if (count == 0) return;
  std::vector<std::vector<std::string>> rows{{"name", "dtype", "shape", "min", "max", "mean"}};
  for (const auto& [name, tensor] : file.tensors) {
    Summary s = summarize(tensor);
    rows.push_back({displayable(name), tensor.dtype().to_string(), shape_to_string(tensor.shape()),
                    s.min, s.max, s.mean});
  }
  print_table(rows);
}

void add_inspect_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("inspect", "List the tensors of a .npy, .npz or params file");
  auto path = std::make_shared<std::string>();
  cmd->add_option("file", *path, "the file to inspect; its format is read from its first bytes")
      ->required()
      ->check(existing_path());
  cmd->footer(
      "Examples:\n"
      "  anvil inspect weights.npz     arrays saved by np.savez or np.savez_compressed\n"
      "  anvil inspect input.npy       one array saved by np.save\n"
      "  anvil inspect mod.params      the weights of a compiled model (TVM params format)\n");
  cmd->callback([path] { print_tensor_file_summary(*path); });
}

}  // namespace anvil::cli
