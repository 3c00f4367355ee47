// MobileNet v1 (Howard et al.) as TVM's relay.testing.mobilenet builds it:
// a strided 3x3 conv, then depthwise-separable blocks, then the classifier.
#include "workloads/graph_builder.h"

namespace anvil::testing {
namespace {

using namespace ir;

Expr conv_block(GraphBuilder& b, const Expr& data, const std::string& name, int64_t in_channels,
                int64_t channels, int64_t stride) {
  Expr conv = layers::conv2d(b, data, name + "_conv", in_channels, channels, {3, 3},
                             {stride, stride}, {1, 1, 1, 1});
  return b.op("nn.relu", {layers::batch_norm_infer(b, conv, name + "_bn", channels, 1e-5)});
}

// A depthwise 3x3 conv followed by a pointwise 1x1 conv, each with BN and ReLU.
Expr separable_conv_block(GraphBuilder& b, const Expr& data, const std::string& name,
                          int64_t depthwise_channels, int64_t pointwise_channels, bool downsample) {
  int64_t stride = downsample ? 2 : 1;
  Expr conv1 = layers::conv2d(b, data, name + "_depthwise_conv1", depthwise_channels,
                              depthwise_channels, {3, 3}, {stride, stride}, {1, 1, 1, 1},
                              /*groups=*/depthwise_channels);
  Expr act1 = b.op("nn.relu",
                   {layers::batch_norm_infer(b, conv1, name + "_bn1", depthwise_channels, 1e-5)});
  Expr conv2 = layers::conv2d(b, act1, name + "_conv2", depthwise_channels, pointwise_channels,
                              {1, 1}, {1, 1}, {0, 0, 0, 0});
  return b.op("nn.relu",
              {layers::batch_norm_infer(b, conv2, name + "_bn2", pointwise_channels, 1e-5)});
}

}  // namespace

Workload mobilenet(int64_t batch, int64_t num_classes, std::vector<int64_t> image_shape,
                   DataType dtype, uint64_t seed) {
  if (image_shape.size() != 3)
    throw_error("mobilenet image shape must be (channels, height, width)");
  GraphBuilder b(dtype, seed);
  Expr data = b.input("data", {batch, image_shape[0], image_shape[1], image_shape[2]});
  Expr body = conv_block(b, data, "conv_block_1", image_shape[0], 32, 2);
  struct Block {
    int64_t depthwise, pointwise;
    bool downsample;
  };
  const Block blocks[] = {{32, 64, false},    {64, 128, true},   {128, 128, false},
                          {128, 256, true},   {256, 256, false}, {256, 512, true},
                          {512, 512, false},  {512, 512, false}, {512, 512, false},
                          {512, 512, false},  {512, 512, false}, {512, 1024, true},
                          {1024, 1024, false}};
  for (size_t i = 0; i < std::size(blocks); ++i)
    body = separable_conv_block(b, body, "separable_conv_block_" + std::to_string(i + 1),
                                blocks[i].depthwise, blocks[i].pointwise, blocks[i].downsample);
  body = b.op("nn.global_avg_pool2d", {body});
  body = b.op("nn.batch_flatten", {body});
  Var weight = b.param("fc_weight", {num_classes, 1024}, Init::Xavier);
  Var bias = b.param("fc_bias", {num_classes}, Init::Zeros);
  body = b.op("nn.dense", {body, weight}, {{"units", num_classes}});
  body = b.op("nn.bias_add", {body, bias});
  body = b.op("nn.softmax", {body});
  return b.finish(body);
}

}  // namespace anvil::testing
