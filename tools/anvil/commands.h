// The anvil subcommands. Each lives in its own file and adds itself to the app.
#pragma once

namespace CLI {
class App;
}

namespace anvil::cli {

// Adds `anvil inspect FILE`: one row per tensor of a .npy, .npz or params file.
void add_inspect_command(CLI::App& app);

}  // namespace anvil::cli
