// The anvil command line: parses flags, dispatches to a subcommand, and turns
// every failure into one line on stderr and an exit code (2 usage, 1 other).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

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

// The command line with each long flag that is an unambiguous prefix of one of the flags of its
// command (or of anvil's own, before the command) written out, as tvmc's argparse takes them (its
// tutorials write `--output` for run's `--outputs`); in CLI11's order (reversed). A prefix of
// several flags is a usage error naming them.
std::vector<std::string> expand_flag_prefixes(CLI::App& app, int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  CLI::App* command = nullptr;
  for (std::string& arg : args) {
    if (arg == "--") break;
    if (!command && arg.rfind("-", 0) != 0) {
      for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
        if (sub->get_name() == arg) command = sub;
      continue;
    }
    if (arg.size() <= 2 || arg.rfind("--", 0) != 0) continue;
    const CLI::App* scope = command ? command : &app;
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    std::vector<std::string> matches;
    for (const CLI::Option* option : scope->get_options()) {
      for (const std::string& long_name : option->get_lnames()) {
        if (long_name == name) matches = {long_name};
        if (long_name == name) break;
        if (long_name.rfind(name, 0) == 0) matches.push_back(long_name);
      }
      if (matches.size() == 1 && matches[0] == name) break;
    }
    if (matches.size() == 1) {
      arg = "--" + matches[0] + (eq == std::string::npos ? "" : arg.substr(eq));
    } else if (matches.size() > 1) {
      std::string list;
      for (const std::string& m : matches) list += (list.empty() ? "--" : ", --") + m;
      throw CLI::ValidationError("--" + name, "is a prefix of several flags (" + list + ")");
    }
  }
  std::reverse(args.begin(), args.end());
  return args;
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
  anvil::cli::add_quantize_command(app);

  try {
    app.parse(expand_flag_prefixes(app, argc, argv));
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
