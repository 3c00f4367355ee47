// Reading tuning records (one JSON object per line) and choosing the best one per task.
#include "anvil/driver/tuning_records.h"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "anvil/ir/printer.h"
#include "anvil/support/error.h"

namespace anvil::driver {
namespace {

using Json = nlohmann::json;

const std::string& string_field(const Json& json, const char* key, const std::string& where) {
  auto it = json.find(key);
  if (it == json.end() || !it->is_string() || it->get_ref<const std::string&>().empty())
    throw_error(where, ": '", key, "' must be a non-empty string");
  return it->get_ref<const std::string&>();
}

TuningRecord parse_record(const std::string& line, const std::string& where) {
  Json json;
  try {
    json = Json::parse(line);
  } catch (const Json::parse_error& e) {
    // The parser's own message quotes the bytes it read, which may be anything.
    throw_error(where, ": not JSON (syntax error at byte ", e.byte, ")");
  }
  if (!json.is_object()) throw_error(where, ": a record must be a JSON object");
  TuningRecord record;
  auto version = json.find("version");
  if (version == json.end() || !version->is_number_integer() ||
      version->get<int>() != kRecordsVersion)
    throw_error(where, ": 'version' must be ", kRecordsVersion);
  record.task = string_field(json, "task", where);
  record.strategy = string_field(json, "strategy", where);
  record.target = string_field(json, "target", where);
  if (auto name = json.find("name"); name != json.end() && name->is_string())
    record.name = name->get<std::string>();
  auto knobs = json.find("knobs");
  if (knobs == json.end() || !knobs->is_object())
    throw_error(where, ": 'knobs' must be an object of integers");
  for (const auto& [name, value] : knobs->items()) {
    if (!value.is_number_integer()) throw_error(where, ": knob '", name, "' must be an integer");
    record.knobs[name] = value.get<int64_t>();
  }
  auto error = json.find("error");
  if (error == json.end() || !error->is_number_integer() || error->get<int>() < kRecordOk ||
      error->get<int>() > kRecordWrongResult)
    throw_error(where, ": 'error' must be an error code 0..4");
  record.error = error->get<int>();
  auto costs = json.find("costs_ms");
  if (costs == json.end() || !costs->is_array())
    throw_error(where, ": 'costs_ms' must be an array of times");
  for (const Json& cost : *costs) {
    if (!cost.is_number() || cost.get<double>() < 0)
      throw_error(where, ": 'costs_ms' must hold non-negative numbers");
    record.costs_ms.push_back(cost.get<double>());
  }
  if (record.error == kRecordOk && record.costs_ms.empty())
    throw_error(where, ": a record without error needs its 'costs_ms'");
  if (auto timestamp = json.find("timestamp");
      timestamp != json.end() && timestamp->is_number_integer())
    record.timestamp = timestamp->get<int64_t>();
  return record;
}

}  // namespace

double TuningRecord::mean_ms() const {
  if (costs_ms.empty()) return 0;
  return std::accumulate(costs_ms.begin(), costs_ms.end(), 0.0) / double(costs_ms.size());
}

TuningRecords read_tuning_records(const std::string& path, bool strict) {
  std::ifstream in(path);
  if (!in) throw_error("tuning records '", path, "' do not exist or cannot be read");
  TuningRecords result;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    const std::string where = "tuning records '" + path + "' line " + std::to_string(number);
    try {
      TuningRecord record = parse_record(line, where);
      record.line = number;
      result.records.push_back(std::move(record));
    } catch (const Error& e) {
      if (strict) throw;
      result.problems.push_back(e.what());
    }
  }
  return result;
}

std::string format_tuning_record(const TuningRecord& record) {
  Json json = {
      {"version", record.version},   {"task", record.task},     {"name", record.name},
      {"strategy", record.strategy}, {"target", record.target}, {"knobs", Json::object()},
      {"costs_ms", record.costs_ms}, {"error", record.error},   {"timestamp", record.timestamp}};
  for (const auto& [name, value] : record.knobs) json["knobs"][name] = value;
  return json.dump();
}

std::string workload_key(const ir::Function& group) {
  ir::PrintOptions options;
  options.include_metadata = false;
  const std::string text = ir::print_expr(group, options);
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

std::map<std::string, TuningRecord> best_records(const TuningRecords& records,
                                                 const std::string& target,
                                                 std::vector<std::string>& problems) {
  std::map<std::string, TuningRecord> best;
  for (const TuningRecord& record : records.records) {
    if (record.target != target) {
      problems.push_back("tuning records line " + std::to_string(record.line) + ": target '" +
                         record.target + "' is not this build's '" + target + "'");
      continue;
    }
    if (record.error != kRecordOk) continue;
    auto [it, inserted] = best.try_emplace(record.task, record);
    if (!inserted && record.mean_ms() < it->second.mean_ms()) it->second = record;
  }
  return best;
}

}  // namespace anvil::driver
