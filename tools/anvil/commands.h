// The anvil subcommands. Each lives in its own file and adds itself to the app.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace anvil::cli {

// Adds `anvil inspect FILE`: one row per tensor of a .npy, .npz or params file.
void add_inspect_command(CLI::App& app);

// Adds `anvil print-ir`: prints a module (a built-in workload) as graph IR text.
void add_print_ir_command(CLI::App& app);

// Adds `anvil run MODEL`: runs a model on inputs from .npz and writes its outputs.
void add_run_command(CLI::App& app);

// Adds `anvil compile MODEL`: builds a model into a package (.tar or .so).
void add_compile_command(CLI::App& app);

// Adds `anvil demo`: anvil's main job on a built-in network, end to end.
void add_demo_command(CLI::App& app);

// Adds `anvil analyze FILE`: per-layer MACs, FLOPs, parameters and activation bytes.
void add_analyze_command(CLI::App& app);

// Adds `anvil tune`: reserved for auto-tuning; a usage error until it exists.
void add_tune_command(CLI::App& app);

// Adds `anvil quantize MODEL --calibration data.npz -o OUT`: post-training static quantization.
void add_quantize_command(CLI::App& app);

// Prints the summary line and per-tensor table of a .npy, .npz or params file.
void print_tensor_file_summary(const std::string& path);

}  // namespace anvil::cli
