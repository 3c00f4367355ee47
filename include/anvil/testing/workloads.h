// Built-in workloads: the networks TVM's relay.testing builds, with
// parameters initialized from a fixed seed. Used by `anvil demo`, print-ir
// and the tests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "anvil/ir/ir.h"

namespace anvil::testing {

// A typed module (@main) and its parameters by name. The first parameter of
// @main ("data") is the input; every other parameter has an entry in params.
struct Workload {
  ir::IRModule mod;
  std::vector<std::pair<std::string, Tensor>> params;

  // Sum of the element counts of all parameters.
  int64_t parameter_count() const;
};

// The pre-activation ResNet of TVM's relay.testing.resnet (num_layers in
// 18, 34, 50, 101, 152), image_shape (channels, height, width).
Workload resnet(int num_layers, int64_t batch = 1, std::vector<int64_t> image_shape = {3, 224, 224},
                int64_t num_classes = 1000, DataType dtype = DataType::float32(),
                uint64_t seed = 0);

// The MLP of the MLC course: dense(in -> hidden), relu, dense(hidden -> classes).
Workload mlp(int64_t batch = 1, int64_t in_features = 784, int64_t hidden = 128,
             int64_t classes = 10, DataType dtype = DataType::float32(), uint64_t seed = 0);

// MobileNet v1 of TVM's relay.testing.mobilenet.
Workload mobilenet(int64_t batch = 1, int64_t num_classes = 1000,
                   std::vector<int64_t> image_shape = {3, 224, 224},
                   DataType dtype = DataType::float32(), uint64_t seed = 0);

// A workload by name: resnet18/34/50/101/152, mlp, mobilenet; throws Error listing the names.
Workload workload_by_name(const std::string& name, int64_t batch = 1);

// The names workload_by_name accepts.
std::vector<std::string> workload_names();

}  // namespace anvil::testing
