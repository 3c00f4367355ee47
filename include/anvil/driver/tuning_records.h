// Tuning records: what `anvil tune` measures and `anvil compile --tuning-records` reads. One
// JSON object per line (docs/cli.md): the kernel, the target, the schedule parameters tried and
// the latency measured with them.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace anvil::driver {

struct TuningRecord {
  std::string kernel;                     // the kernel's name in the compiled module
  std::string target;                     // the target string it was measured on
  std::map<std::string, int64_t> config;  // schedule parameters (tile sizes, unroll, ...)
  double latency_ms = 0;                  // the measured mean latency
};

// Reads a records file. A missing file, a line that is not a JSON object, or a record without a
// string "kernel" and "target", an object "config" of integers and a non-negative "latency_ms"
// is an Error naming the file and line. Blank lines and lines starting with '#' are skipped.
std::vector<TuningRecord> read_tuning_records(const std::string& path);

}  // namespace anvil::driver
