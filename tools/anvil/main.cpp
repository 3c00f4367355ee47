// The anvil command line: parses flags, dispatches to a subcommand, and turns
// every failure into one line on stderr and an exit code (2 usage, 1 other).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "anvil/support/error.h"
#include "commands.h"

#ifndef ANVIL_VERSION
#define ANVIL_VERSION "unknown"
#endif

namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

int report(const char* kind, const std::string& message, int code) {
  std::string line = message;
  for (char& c : line)
    if (c == '\n') c = ' ';
  std::fprintf(stderr, "anvil: %s: %s\n", kind, line.c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"anvil: a deep-learning compiler. Models in, fast native code out.", "anvil"};
  app.set_version_flag("--version", std::string("anvil ") + ANVIL_VERSION);
  app.require_subcommand(0, 1);
  app.footer(
      "Examples:\n"
      "  anvil inspect params.npz          list the tensors of a numpy archive\n"
      "  anvil inspect model.params        list the tensors of a params file\n"
      "  anvil print-ir --workload resnet18   print a built-in network as graph IR\n"
      "  anvil demo                        build, save and run the built-in ResNet-18\n"
      "  anvil run model.onnx -i in.npz -o out.npz   run an ONNX model\n"
      "Run 'anvil <command> --help' for the flags of one command.");
  anvil::cli::add_inspect_command(app);
  anvil::cli::add_print_ir_command(app);
  anvil::cli::add_demo_command(app);
  anvil::cli::add_compile_command(app);
  anvil::cli::add_run_command(app);
  anvil::cli::add_analyze_command(app);
  anvil::cli::add_tune_command(app);

  try {
    app.parse(argc, argv);
    if (app.get_subcommands().empty())
      return report("error", "no command given; run 'anvil --help' to list them", kExitUsage);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return report("error", e.what(), kExitUsage);
  } catch (const anvil::Error& e) {
    return report("error", e.what(), kExitError);
  } catch (const anvil::InternalError& e) {
    return report("internal error", e.what(), kExitError);
  } catch (const std::bad_alloc&) {
    return report("error", "out of memory", kExitError);
  } catch (const std::exception& e) {
    return report("error", e.what(), kExitError);
  }
  return 0;
}
