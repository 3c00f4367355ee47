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
#include <climits>
#include <cstdint>
#include <cstdio>
#include <map>
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

// The features that differ from what cpu implies, as "+name"/"-name" in a stable order (a
// virtual machine may hide some, a CPU newer than its name has more).
std::vector<std::string> feature_differences(const std::string& triple, const std::string& cpu,
                                             const std::map<std::string, bool>& features) {
  auto cpu_defaults = subtarget_info(triple, cpu, "");
  std::vector<std::string> differences;
  for (const auto& [name, present] : features) {
    bool implied = cpu_defaults->checkFeatures("+" + name);
    if (implied != present) differences.push_back((present ? "+" : "-") + name);
  }
  std::sort(differences.begin(), differences.end());
  return differences;
}

// Named CPUs by vendor, newest first (a tie in distance goes to the newer one). Names that this
// LLVM does not know are skipped.
const std::vector<std::string>& named_cpus(const std::string& vendor) {
  static const std::vector<std::string> amd = {"znver4", "znver3",   "znver2", "znver1",
                                               "bdver4", "bdver3",   "bdver2", "bdver1",
                                               "btver2", "amdfam10", "k8-sse3"};
  static const std::vector<std::string> intel = {
      "graniterapids",  "sapphirerapids", "alderlake",   "icelake-server", "tigerlake",
      "icelake-client", "cooperlake",     "cascadelake", "cannonlake",     "skylake-avx512",
      "skylake",        "broadwell",      "haswell",     "ivybridge",      "sandybridge",
      "westmere",       "nehalem",        "core2"};
  static const std::vector<std::string> none;
  if (vendor == "amd") return amd;
  if (vendor == "intel") return intel;
  return none;
}

// The named CPU of vendor whose implied features differ from `features` in the fewest places.
std::string nearest_named_cpu(const std::string& triple, const std::string& vendor,
                              const std::map<std::string, bool>& features) {
  auto probe = subtarget_info(triple, "", "");
  std::string best = "generic";
  size_t best_distance = SIZE_MAX;
  for (const std::string& cpu : named_cpus(vendor)) {
    if (!probe->isCPUStringValid(cpu)) continue;
    size_t distance = feature_differences(triple, cpu, features).size();
    if (distance < best_distance) {
      best = cpu;
      best_distance = distance;
    }
  }
  return best;
}

std::map<std::string, bool> host_features() {
  llvm::StringMap<bool> found;
  std::map<std::string, bool> features;
  if (!llvm::sys::getHostCPUFeatures(found)) return features;
  for (const auto& entry : found) features[entry.getKey().str()] = entry.getValue();
  return features;
}

std::string host_vendor() {
#if defined(__x86_64__) || defined(__i386__)
  using llvm::sys::detail::x86::VendorSignatures;
  switch (llvm::sys::detail::x86::getVendorSignature()) {
    case VendorSignatures::GENUINE_INTEL:
      return "intel";
    case VendorSignatures::AUTHENTIC_AMD:
      return "amd";
    default:
      break;
  }
#endif
  return "";
}

}  // namespace

ResolvedTarget resolve_target(const Target& target) {
  ResolvedTarget resolved;
  resolved.triple = target.mtriple.empty() ? llvm::sys::getDefaultTargetTriple() : target.mtriple;
  resolved.opt_level = target.opt_level;
  std::vector<std::string> features;
  if (target.mcpu.empty() && target.mtriple.empty()) {
    Target host = Target::host();
    resolved.cpu = host.mcpu;
    features = host.mattrs;
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
    resolved.vnni_512 = info->checkFeatures("+avx512vnni");
    resolved.vnni_256 =
        info->checkFeatures("+avxvnni") || (resolved.vnni_512 && info->checkFeatures("+avx512vl"));
    resolved.bf16_512 = info->checkFeatures("+avx512bf16");
    resolved.bf16_256 = resolved.bf16_512 && info->checkFeatures("+avx512vl");
    resolved.amx_bf16 = info->checkFeatures("+amx-tile,+amx-bf16");
    resolved.amx_int8 = info->checkFeatures("+amx-tile,+amx-int8");
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
    if ((!known || target.kind == "c") && name != "-keys")
      throw_error("unknown option '", tokens[i], "' in target '", text, "'");
    if (value.empty()) throw_error("option '", name, "' in target '", text, "' needs a value");
    if (name == "-keys") {
      target.keys = split(value, ',');
      if (value.front() == ',' || value.back() == ',' || value.find(",,") != std::string::npos)
        throw_error("empty key in '", tokens[i], "' of target '", text, "'");
    } else if (name == "-mcpu") {
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
  // Asking LLVM about the host is slow enough (a subtarget per candidate) to do once.
  static const Target host =
      describe_host(llvm::sys::getDefaultTargetTriple(), llvm::sys::getHostCPUName().str(),
                    llvm_backend::host_vendor(), llvm_backend::host_features());
  return host;
}

Target Target::describe_host(const std::string& triple, const std::string& cpu_name,
                             const std::string& vendor,
                             const std::map<std::string, bool>& features) {
  Target target;
  target.mcpu = cpu_name;
  if (cpu_name.empty() || cpu_name == "generic") {
    target.mcpu = llvm_backend::nearest_named_cpu(triple, vendor, features);
  }
  target.mattrs = llvm_backend::feature_differences(triple, target.mcpu, features);
  return target;
}

std::map<std::string, bool> Target::cpu_features(const std::string& triple,
                                                 const std::string& cpu) {
  // LLVM 16 keeps its feature table private; the names the host reports (every feature the
  // host detection knows, present or not) are the universe a host description can hold.
  auto info = llvm_backend::subtarget_info(triple, cpu, "");
  std::map<std::string, bool> features = llvm_backend::host_features();
  for (auto& [name, present] : features) present = info->checkFeatures("+" + name);
  return features;
}

std::string Target::to_string() const {
  std::string out = kind;
  if (!keys.empty()) out += " -keys=" + llvm_backend::join(keys, ",");
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

bool Target::has_bf16_dot_product() const {
  return kind == "llvm" && llvm_backend::resolve_target(*this).bf16_512;
}

bool Target::has_amx_bf16() const {
  return kind == "llvm" && llvm_backend::resolve_target(*this).amx_bf16;
}

int Target::vector_registers() const {
  std::string triple = mtriple.empty() ? llvm::sys::getDefaultTargetTriple() : mtriple;
  llvm::Triple parsed(triple);
  if (parsed.isX86()) return vector_bits() >= 512 ? 32 : 16;
  if (parsed.isAArch64()) return 32;
  return 16;
}

}  // namespace anvil::codegen
