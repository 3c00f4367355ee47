// Tuning records: what `anvil tune` measures and `anvil compile --tuning-records` applies. One
// JSON object per line (docs/cli.md, --tuning-records), one line per measured candidate:
//   {"version": 1, "task": "ffdb3990c86157f9", "name": "fused_nn_contrib_conv2d_NCHWc_add",
//    "strategy": "x86.conv2d_nchwc", "target": "llvm", "knobs": {"oc_tile": 2, "ow_block": 7},
//    "costs_ms": [0.41, 0.40], "error": 0, "timestamp": 1795000000}
// Records are keyed by workload (the task's key), so a tuned workload helps every model that
// has it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "anvil/ir/ir.h"

namespace anvil::driver {

inline constexpr int kRecordsVersion = 1;

// Why a candidate has no time: 0 none; 1 it did not compile; 2 it crashed; 3 it ran past the
// time limit; 4 its output differed from the default schedule's.
enum RecordError : int {
  kRecordOk = 0,
  kRecordCompileError = 1,
  kRecordRuntimeError = 2,
  kRecordTimeout = 3,
  kRecordWrongResult = 4
};

struct TuningRecord {
  int version = kRecordsVersion;
  std::string task;      // the workload key (workload_key)
  std::string name;      // the kernel's readable name, for people
  std::string strategy;  // the schedule strategy whose knobs these are
  std::string target;    // the target string it was measured on
  std::map<std::string, int64_t> knobs;
  std::vector<double> costs_ms;  // one per timed repeat (empty after an error)
  int error = kRecordOk;
  int64_t timestamp = 0;  // seconds since the epoch
  int line = 0;           // its line in the file it was read from

  double mean_ms() const;
};

struct TuningRecords {
  std::vector<TuningRecord> records;
  // One line each, "tuning records 'PATH' line N: why", for lines that were skipped.
  std::vector<std::string> problems;
};

// Reads a records file; blank lines and lines starting with '#' are skipped. A missing file is
// an Error. A line that is not a record of this version is skipped with a problem, or, with
// `strict`, is an Error naming the file and line.
TuningRecords read_tuning_records(const std::string& path, bool strict = false);

// The record as one line of a records file (no newline); read_tuning_records reads it back.
std::string format_tuning_record(const TuningRecord& record);

// The workload key of a fused group: a 64-bit FNV-1a hash, in hex, of the group's text (the
// same ops, shapes, dtypes, layouts and attrs give the same key in any model).
std::string workload_key(const ir::Function& group);

// The best record per task for `target`: the least mean cost among the records without error.
// Records for another target are skipped, each with a problem naming its line.
std::map<std::string, TuningRecord> best_records(const TuningRecords& records,
                                                 const std::string& target,
                                                 std::vector<std::string>& problems);

}  // namespace anvil::driver
