// anvil inspect FILE: one row per tensor (name, dtype, shape, min, max, mean).
#include <CLI/CLI.hpp>

#include "anvil/support/error.h"
#include "commands.h"

namespace anvil::cli {

void add_inspect_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("inspect", "List the tensors of a .npy, .npz or params file");
  auto path = std::make_shared<std::string>();
  cmd->add_option("file", *path, "the file to inspect")->required();
  cmd->callback([path] { throw_error("inspect: not implemented yet for '", *path, "'"); });
}

}  // namespace anvil::cli
