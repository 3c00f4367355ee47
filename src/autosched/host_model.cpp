// The host model read from sysfs: cache sizes of cpu0's data and unified caches by level, and
// the number of cores this process may run on.
#include <fstream>
#include <string>
#include <thread>

#include "anvil/autosched/auto_schedule.h"

namespace anvil::autosched {
namespace {

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "48K", "1024K", "32M" -> bytes; 0 when unreadable.
int64_t parse_size(const std::string& text) {
  if (text.empty()) return 0;
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0) return 0;
  int64_t value = std::stoll(text.substr(0, digits));
  char unit = digits < text.size() ? text[digits] : 'B';
  if (unit == 'K') value <<= 10;
  if (unit == 'M') value <<= 20;
  if (unit == 'G') value <<= 30;
  return value;
}

}  // namespace

HostModel HostModel::for_target(int vector_bits) {
  static const HostModel machine = [] {
    HostModel m;
    for (int index = 0; index < 8; ++index) {
      const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
      const std::string type = read_line(dir + "/type");
      if (type.empty()) break;
      if (type == "Instruction") continue;
      const int64_t size = parse_size(read_line(dir + "/size"));
      const std::string level = read_line(dir + "/level");
      if (size <= 0) continue;
      if (level == "1") m.l1_bytes = size;
      if (level == "2") m.l2_bytes = size;
      if (level == "3") m.l3_bytes = size;
    }
    m.cores = std::max(1u, std::thread::hardware_concurrency());
    return m;
  }();
  HostModel model = machine;
  model.vector_bits = vector_bits;
  // AVX-512 doubles the register file along with the width; narrower targets have 16.
  model.vector_registers = vector_bits >= 512 ? 32 : 16;
  return model;
}

}  // namespace anvil::autosched
