// anvil tune: the place of tvmc's auto-tuner. Until the tuner exists the command refuses with a
// usage error instead of pretending to tune; `anvil compile --tuning-records` reads the record
// format it will write (docs/cli.md).
#include <CLI/CLI.hpp>

#include "commands.h"

namespace anvil::cli {

void add_tune_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("tune", "Auto-tune the kernels of a model (not available yet)");
  // Whatever follows is accepted so that the message below, not a flag error, is what users see.
  cmd->allow_extras();
  cmd->footer(
      "Examples (once tuning is available):\n"
      "  anvil tune resnet50.onnx -o resnet50.records\n"
      "  anvil tune resnet50.onnx --trials 2000 --target \"llvm -mcpu=znver4\" -o r.records\n"
      "  anvil compile resnet50.onnx --tuning-records resnet50.records -o resnet50.tar");
  cmd->callback([] {
    throw CLI::ValidationError(
        "tune", "auto-tuning is not available yet; compile without --tuning-records instead");
  });
}

}  // namespace anvil::cli
