// Target strings ("llvm -mcpu=znver4 -mattr=+avx512f"), the host target, and what LLVM makes
// of them.
#include "anvil/codegen/target.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <sstream>

#include "anvil/support/error.h"
#include "codegen/llvm/codegen_llvm.h"

namespace anvil::codegen {

namespace llvm_backend {

void initialize_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
  });
}

namespace {

const llvm::Target& lookup_target(const std::string& triple) {
  initialize_llvm();
  std::string message;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, message);
  if (!target) throw_error("unknown target triple '", triple, "': ", message);
  return *target;
}

std::unique_ptr<llvm::MCSubtargetInfo> subtarget_info(const std::string& triple,
                                                      const std::string& cpu,
                                                      const std::string& features) {
  const llvm::Target& target = lookup_target(triple);
  return std::unique_ptr<llvm::MCSubtargetInfo>(
      target.createMCSubtargetInfo(triple, cpu, features));
}

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

// The host's features that differ from what its CPU name implies (a virtual machine may hide
// some), as "+name"/"-name" in a stable order.
std::vector<std::string> host_feature_differences(const std::string& triple,
                                                  const std::string& cpu) {
  llvm::StringMap<bool> host_features;
  if (!llvm::sys::getHostCPUFeatures(host_features)) return {};
  auto cpu_defaults = subtarget_info(triple, cpu, "");
  std::vector<std::string> differences;
  for (const auto& entry : host_features) {
    std::string name = entry.getKey().str();
    bool implied = cpu_defaults->checkFeatures("+" + name);
    if (implied != entry.getValue()) differences.push_back((entry.getValue() ? "+" : "-") + name);
  }
  std::sort(differences.begin(), differences.end());
  return differences;
}

}  // namespace

ResolvedTarget resolve_target(const Target& target) {
  ResolvedTarget resolved;
  resolved.triple = target.mtriple.empty() ? llvm::sys::getDefaultTargetTriple() : target.mtriple;
  resolved.opt_level = target.opt_level;
  std::vector<std::string> features;
  if (target.mcpu.empty() && target.mtriple.empty()) {
    resolved.cpu = llvm::sys::getHostCPUName().str();
    features = host_feature_differences(resolved.triple, resolved.cpu);
  } else {
    resolved.cpu = target.mcpu.empty() ? "generic" : target.mcpu;
  }
  features.insert(features.end(), target.mattrs.begin(), target.mattrs.end());
  resolved.features = join(features, ",");
  auto info = subtarget_info(resolved.triple, resolved.cpu, resolved.features);
  llvm::Triple triple(resolved.triple);
  if (triple.isX86()) {
    resolved.vector_bits = info->checkFeatures("+avx512f") ? 512
                           : info->checkFeatures("+avx")   ? 256
                                                           : 128;
  } else {
    resolved.vector_bits = 128;
  }
  return resolved;
}

std::unique_ptr<llvm::TargetMachine> create_target_machine(const ResolvedTarget& target, bool pic) {
  const llvm::Target& llvm_target = lookup_target(target.triple);
  llvm::TargetOptions options;
  llvm::CodeGenOpt::Level level = target.opt_level <= 0   ? llvm::CodeGenOpt::None
                                  : target.opt_level == 1 ? llvm::CodeGenOpt::Less
                                  : target.opt_level == 2 ? llvm::CodeGenOpt::Default
                                                          : llvm::CodeGenOpt::Aggressive;
  std::optional<llvm::Reloc::Model> reloc;
  if (pic) reloc = llvm::Reloc::PIC_;
  llvm::TargetMachine* tm = llvm_target.createTargetMachine(
      target.triple, target.cpu, target.features, options, reloc, std::nullopt, level);
  if (!tm) throw_error("LLVM cannot create a target machine for '", target.triple, "'");
  return std::unique_ptr<llvm::TargetMachine>(tm);
}

}  // namespace llvm_backend

namespace {

// "-name=value" -> (name, value); value empty when there is no '='.
std::pair<std::string, std::string> split_option(const std::string& token) {
  size_t eq = token.find('=');
  if (eq == std::string::npos) return {token, ""};
  return {token.substr(0, eq), token.substr(eq + 1)};
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

// True when LLVM knows the subtarget feature. LLVM itself only prints a warning for an unknown
// one and then ignores it, so the check creates the subtarget with the feature and looks for
// that warning, with stderr sent to a scratch file meanwhile.
bool is_known_feature(const std::string& triple, const std::string& name) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::FILE* scratch = std::tmpfile();
  if (!scratch) return true;  // cannot check; LLVM's warning will still show
  llvm::errs().flush();
  int saved = ::dup(STDERR_FILENO);
  ::dup2(::fileno(scratch), STDERR_FILENO);
  llvm_backend::subtarget_info(triple, "", "+" + name);
  llvm::errs().flush();
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::string warnings;
  std::rewind(scratch);
  char buffer[512];
  for (size_t got; (got = std::fread(buffer, 1, sizeof buffer, scratch)) > 0;)
    warnings.append(buffer, got);
  std::fclose(scratch);
  return warnings.find("not a recognized feature") == std::string::npos;
}

}  // namespace

Target Target::parse(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::vector<std::string> tokens;
  for (std::string token; in >> token;) tokens.push_back(token);
  if (tokens.empty()) throw_error("empty target string");
  Target target;
  target.kind = tokens[0];
  if (target.kind != "llvm" && target.kind != "c")
    throw_error("unknown target kind '", target.kind, "' (expected 'llvm' or 'c')");
  for (size_t i = 1; i < tokens.size(); ++i) {
    auto [name, value] = split_option(tokens[i]);
    bool known = name == "-mcpu" || name == "-mattr" || name == "-mtriple" || name == "-opt-level";
    if (!known || target.kind == "c")
      throw_error("unknown option '", tokens[i], "' in target '", text, "'");
    if (value.empty()) throw_error("option '", name, "' in target '", text, "' needs a value");
    if (name == "-mcpu") {
      target.mcpu = value;
    } else if (name == "-mtriple") {
      target.mtriple = value;
    } else if (name == "-opt-level") {
      if (value.size() != 1 || value[0] < '0' || value[0] > '3')
        throw_error("bad -opt-level '", value, "' in target '", text, "' (expected 0 to 3)");
      target.opt_level = value[0] - '0';
    } else {
      for (const std::string& feature : split(value, ',')) {
        if (feature.size() < 2 || (feature[0] != '+' && feature[0] != '-'))
          throw_error("bad feature '", feature, "' in target '", text,
                      "' (expected +name or -name)");
        target.mattrs.push_back(feature);
      }
    }
  }
  if (target.kind == "llvm") {
    std::string triple =
        target.mtriple.empty() ? llvm::sys::getDefaultTargetTriple() : target.mtriple;
    // Creating the subtarget with an empty CPU checks the triple without LLVM warnings.
    auto info = llvm_backend::subtarget_info(triple, "", "");
    if (!target.mcpu.empty() && target.mcpu != "generic" && !info->isCPUStringValid(target.mcpu))
      throw_error("unknown CPU '", target.mcpu, "' for ", triple, " in target '", text, "'");
    for (const std::string& feature : target.mattrs)
      if (!is_known_feature(triple, feature.substr(1)))
        throw_error("unknown feature '", feature, "' for ", triple, " in target '", text, "'");
  }
  return target;
}

Target Target::host() {
  Target target;
  std::string triple = llvm::sys::getDefaultTargetTriple();
  target.mcpu = llvm::sys::getHostCPUName().str();
  target.mattrs = llvm_backend::host_feature_differences(triple, target.mcpu);
  return target;
}

std::string Target::to_string() const {
  std::string out = kind;
  if (kind != "llvm") return out;
  if (!mtriple.empty()) out += " -mtriple=" + mtriple;
  if (!mcpu.empty()) out += " -mcpu=" + mcpu;
  if (!mattrs.empty()) out += " -mattr=" + llvm_backend::join(mattrs, ",");
  if (opt_level != 3) out += " -opt-level=" + std::to_string(opt_level);
  return out;
}

int Target::vector_bits() const {
  Target llvm_view = *this;
  llvm_view.kind = "llvm";
  return llvm_backend::resolve_target(llvm_view).vector_bits;
}

int Target::vector_registers() const {
  std::string triple = mtriple.empty() ? llvm::sys::getDefaultTargetTriple() : mtriple;
  llvm::Triple parsed(triple);
  if (parsed.isX86()) return vector_bits() >= 512 ? 32 : 16;
  if (parsed.isAArch64()) return 32;
  return 16;
}

}  // namespace anvil::codegen
