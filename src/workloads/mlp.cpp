// The two-layer perceptron of the MLC course (Fashion-MNIST, 784 -> 128 -> 10),
// and the lookup of workloads by name.
#include "workloads/graph_builder.h"

namespace anvil::testing {

using namespace ir;

Workload mlp(int64_t batch, int64_t in_features, int64_t hidden, int64_t classes, DataType dtype,
             uint64_t seed) {
  GraphBuilder b(dtype, seed);
  Expr data = b.input("data", {batch, in_features});
  Expr body = layers::dense_add_bias(b, data, "linear0", in_features, hidden);
  body = b.op("nn.relu", {body});
  body = layers::dense_add_bias(b, body, "linear1", hidden, classes);
  return b.finish(body);
}

std::vector<std::string> workload_names() {
  return {"resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "mlp", "mobilenet"};
}

Workload workload_by_name(const std::string& name, int64_t batch) {
  if (name.starts_with("resnet")) {
    std::string depth = name.substr(6);
    for (int d : {18, 34, 50, 101, 152})
      if (depth == std::to_string(d)) return resnet(d, batch);
  }
  if (name == "mlp") return mlp(batch);
  if (name == "mobilenet") return mobilenet(batch);
  std::string known;
  for (const std::string& n : workload_names()) known += (known.empty() ? "" : ", ") + n;
  throw_error("unknown workload '", name, "' (known: ", known, ")");
}

}  // namespace anvil::testing
