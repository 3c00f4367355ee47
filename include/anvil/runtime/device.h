// Where a tensor lives and a kernel runs.
#pragma once

#include <dlpack/dlpack.h>

#include <string>

namespace anvil {

// The device kinds anvil knows, numbered as DLPack numbers them.
enum class DeviceType : int32_t { CPU = kDLCPU, CUDA = kDLCUDA };

// A device: its kind and its index among devices of that kind.
struct Device {
  DeviceType type = DeviceType::CPU;
  int32_t id = 0;

  static constexpr Device cpu(int32_t id = 0) { return {DeviceType::CPU, id}; }
  DLDevice to_dlpack() const { return DLDevice{DLDeviceType(type), id}; }
  // "cpu" or "cuda:1".
  std::string to_string() const {
    std::string name = type == DeviceType::CPU ? "cpu" : "cuda";
    return id == 0 ? name : name + ":" + std::to_string(id);
  }
  constexpr bool operator==(const Device&) const = default;
};

}  // namespace anvil
