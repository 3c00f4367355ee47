// Reading tuning records: one JSON object per line.
#include "anvil/driver/tuning_records.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "anvil/support/error.h"

namespace anvil::driver {
namespace {

using Json = nlohmann::json;

TuningRecord parse_record(const std::string& line, const std::string& where) {
  Json json;
  try {
    json = Json::parse(line);
  } catch (const Json::exception& e) {
    throw_error(where, ": not JSON (", e.what(), ")");
  }
  if (!json.is_object()) throw_error(where, ": a record must be a JSON object");
  TuningRecord record;
  for (const char* key : {"kernel", "target"}) {
    auto it = json.find(key);
    if (it == json.end() || !it->is_string() || it->get_ref<const std::string&>().empty())
      throw_error(where, ": '", key, "' must be a non-empty string");
  }
  record.kernel = json["kernel"].get<std::string>();
  record.target = json["target"].get<std::string>();
  auto config = json.find("config");
  if (config == json.end() || !config->is_object())
    throw_error(where, ": 'config' must be an object of integers");
  for (const auto& [name, value] : config->items()) {
    if (!value.is_number_integer()) throw_error(where, ": config '", name, "' must be an integer");
    record.config[name] = value.get<int64_t>();
  }
  auto latency = json.find("latency_ms");
  if (latency == json.end() || !latency->is_number() || latency->get<double>() < 0)
    throw_error(where, ": 'latency_ms' must be a non-negative number");
  record.latency_ms = latency->get<double>();
  return record;
}

}  // namespace

std::vector<TuningRecord> read_tuning_records(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw_error("tuning records '", path, "' do not exist or cannot be read");
  std::vector<TuningRecord> records;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    records.push_back(
        parse_record(line, "tuning records '" + path + "' line " + std::to_string(number)));
  }
  return records;
}

}  // namespace anvil::driver
