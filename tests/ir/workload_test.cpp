// The built-in workloads have the structure of TVM's relay.testing networks.
#include <gtest/gtest.h>

#include <cstring>

#include "anvil/ir/printer.h"
#include "anvil/support/error.h"
#include "anvil/testing/workloads.h"

namespace anvil::testing {
namespace {

TEST(Workload, Resnet18PrintsLikeTheTvmQuickStart) {
  Workload w = resnet(18);
  std::string text = ir::print_module(w.mod);
  // The pre-activation network starts by normalizing the data without scale.
  EXPECT_NE(text.find("%0 = nn.batch_norm(%data, %bn_data_gamma, %bn_data_beta, "
                      "%bn_data_moving_mean, %bn_data_moving_var, epsilon=2e-05f, scale=False)"),
            std::string::npos);
  EXPECT_NE(
      text.find("nn.conv2d(%1, %conv0_weight, strides=[2, 2], padding=[3, 3, 3, 3], "
                "channels=64, kernel_size=[7, 7]) /* ty=Tensor[(1, 64, 112, 112), float32] */"),
      std::string::npos);
  EXPECT_NE(text.find("def @main(%data: Tensor[(1, 3, 224, 224), float32]"), std::string::npos);
  // The body ends with softmax over the 1000 classes.
  size_t last = text.rfind("nn.softmax(");
  ASSERT_NE(last, std::string::npos);
  EXPECT_NE(text.find("/* ty=Tensor[(1, 1000), float32] */", last), std::string::npos);
  EXPECT_EQ(text.find(";", last), std::string::npos) << "softmax must be the final expression";
}

TEST(Workload, ParameterCounts) {
  // TVM's ResNet-50 counts the batch-norm statistics too: 25.5-25.6 M values.
  int64_t resnet50 = resnet(50).parameter_count();
  EXPECT_GE(resnet50, 25'500'000);
  EXPECT_LE(resnet50, 25'600'000);
  // 784*128 + 128 + 128*10 + 10.
  EXPECT_EQ(mlp().parameter_count(), 101'770);
}

TEST(Workload, ParametersMatchTheFunctionSignature) {
  for (const char* name : {"resnet18", "mobilenet", "mlp"}) {
    Workload w = workload_by_name(name);
    ir::Function main = w.mod.get_function("main");
    ASSERT_EQ(main->params.size(), w.params.size() + 1) << name;
    for (size_t i = 0; i < w.params.size(); ++i) {
      EXPECT_EQ(main->params[i + 1]->name, w.params[i].first) << name;
      const auto* t = ir::as<ir::TensorTypeNode>(main->params[i + 1]->annotation);
      ASSERT_TRUE(t) << name;
      EXPECT_EQ(*t->static_shape(), w.params[i].second.shape_vector()) << w.params[i].first;
    }
  }
}

TEST(Workload, SameSeedSameParameters) {
  Workload a = mlp(1, 784, 128, 10, DataType::float32(), 7);
  Workload b = mlp(1, 784, 128, 10, DataType::float32(), 7);
  Workload c = mlp(1, 784, 128, 10, DataType::float32(), 8);
  const Tensor& wa = a.params[0].second;
  EXPECT_EQ(0, std::memcmp(wa.data(), b.params[0].second.data(), size_t(wa.nbytes())));
  EXPECT_NE(0, std::memcmp(wa.data(), c.params[0].second.data(), size_t(wa.nbytes())));
}

TEST(Workload, UnknownNameListsTheKnownOnes) {
  try {
    workload_by_name("resnet19");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("resnet18"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace anvil::testing
