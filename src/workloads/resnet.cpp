// The pre-activation ResNet (He et al., "Identity Mappings in Deep Residual
// Networks") as TVM's relay.testing.resnet builds it, so printed modules and
// parameter names line up with TVM's quick-start.
#include "workloads/graph_builder.h"

namespace anvil::testing {
namespace {

using namespace ir;

Expr relu(GraphBuilder& b, const Expr& x) { return b.op("nn.relu", {x}); }

// One residual unit: BN-ReLU-conv twice (basic) or three times (bottleneck),
// with a 1x1 projection shortcut when the shape changes.
Expr residual_unit(GraphBuilder& b, const Expr& data, int64_t in_channels, int64_t num_filter,
                   int64_t stride, bool dim_match, const std::string& name, bool bottle_neck) {
  std::vector<int64_t> strides = {stride, stride};
  Expr act1 = relu(b, layers::batch_norm_infer(b, data, name + "_bn1", in_channels, 2e-5));
  Expr body;
  if (bottle_neck) {
    int64_t inner = num_filter / 4;
    Expr conv1 =
        layers::conv2d(b, act1, name + "_conv1", in_channels, inner, {1, 1}, strides, {0, 0, 0, 0});
    Expr act2 = relu(b, layers::batch_norm_infer(b, conv1, name + "_bn2", inner, 2e-5));
    Expr conv2 =
        layers::conv2d(b, act2, name + "_conv2", inner, inner, {3, 3}, {1, 1}, {1, 1, 1, 1});
    Expr act3 = relu(b, layers::batch_norm_infer(b, conv2, name + "_bn3", inner, 2e-5));
    body =
        layers::conv2d(b, act3, name + "_conv3", inner, num_filter, {1, 1}, {1, 1}, {0, 0, 0, 0});
  } else {
    Expr conv1 = layers::conv2d(b, act1, name + "_conv1", in_channels, num_filter, {3, 3}, strides,
                                {1, 1, 1, 1});
    Expr act2 = relu(b, layers::batch_norm_infer(b, conv1, name + "_bn2", num_filter, 2e-5));
    body = layers::conv2d(b, act2, name + "_conv2", num_filter, num_filter, {3, 3}, {1, 1},
                          {1, 1, 1, 1});
  }
  Expr shortcut = dim_match ? data
                            : layers::conv2d(b, act1, name + "_sc", in_channels, num_filter, {1, 1},
                                             strides, {0, 0, 0, 0});
  return b.op("add", {body, shortcut});
}

}  // namespace

Workload resnet(int num_layers, int64_t batch, std::vector<int64_t> image_shape,
                int64_t num_classes, DataType dtype, uint64_t seed) {
  std::vector<int64_t> units;
  switch (num_layers) {
    case 18:
      units = {2, 2, 2, 2};
      break;
    case 34:
      units = {3, 4, 6, 3};
      break;
    case 50:
      units = {3, 4, 6, 3};
      break;
    case 101:
      units = {3, 4, 23, 3};
      break;
    case 152:
      units = {3, 8, 36, 3};
      break;
    default:
      throw_error("resnet depth ", num_layers, " is not one of 18, 34, 50, 101, 152");
  }
  if (image_shape.size() != 3) throw_error("resnet image shape must be (channels, height, width)");
  bool bottle_neck = num_layers >= 50;
  std::vector<int64_t> filters = bottle_neck ? std::vector<int64_t>{64, 256, 512, 1024, 2048}
                                             : std::vector<int64_t>{64, 64, 128, 256, 512};

  GraphBuilder b(dtype, seed);
  int64_t channels = image_shape[0], height = image_shape[1];
  Expr data = b.input("data", {batch, channels, image_shape[1], image_shape[2]});
  Expr body = layers::batch_norm_infer(b, data, "bn_data", channels, 2e-5, /*scale=*/false);
  if (height <= 32) {
    // CIFAR-sized inputs keep their resolution.
    body = layers::conv2d(b, body, "conv0", channels, filters[0], {3, 3}, {1, 1}, {1, 1, 1, 1});
  } else {
    body = layers::conv2d(b, body, "conv0", channels, filters[0], {7, 7}, {2, 2}, {3, 3, 3, 3});
    body = relu(b, layers::batch_norm_infer(b, body, "bn0", filters[0], 2e-5));
    body = b.op("nn.max_pool2d", {body},
                {{"pool_size", std::vector<int64_t>{3, 3}},
                 {"strides", std::vector<int64_t>{2, 2}},
                 {"padding", std::vector<int64_t>{1, 1, 1, 1}}});
  }
  int64_t in_channels = filters[0];
  for (size_t stage = 0; stage < units.size(); ++stage) {
    std::string prefix = "stage" + std::to_string(stage + 1) + "_unit";
    body = residual_unit(b, body, in_channels, filters[stage + 1], stage == 0 ? 1 : 2, false,
                         prefix + "1", bottle_neck);
    in_channels = filters[stage + 1];
    for (int64_t unit = 1; unit < units[stage]; ++unit)
      body = residual_unit(b, body, in_channels, in_channels, 1, true,
                           prefix + std::to_string(unit + 1), bottle_neck);
  }
  body = relu(b, layers::batch_norm_infer(b, body, "bn1", in_channels, 2e-5));
  body = b.op("nn.global_avg_pool2d", {body});
  body = b.op("nn.batch_flatten", {body});
  body = layers::dense_add_bias(b, body, "fc1", in_channels, num_classes);
  body = b.op("nn.softmax", {body});
  return b.finish(body);
}

}  // namespace anvil::testing
