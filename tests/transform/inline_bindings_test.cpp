// InlineBindings: lets and dataflow bindings become one expression DAG; a value bound once and
// used twice stays one node, and a function called from the body keeps its own bindings.
#include <gtest/gtest.h>

#include "anvil/transform/passes.h"
#include "transform/pass_test_util.h"

namespace anvil::transform {
namespace {

using testing::parse;
using testing::print;

TEST(InlineBindings, DataflowBindingsAndLetsBecomeOneExpression) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(3), float32]) {
  dataflow {
    %a = exp(%x);
    %b = add(%a, %a);
    output(%b);
  }
  let %c = nn.relu(%b);
  negative(%c)
}
)");
  ir::IRModule after = inline_bindings(mod);
  EXPECT_EQ(print(after), print(parse(R"(
def @main(%x: Tensor[(3), float32]) {
  %0 = exp(%x);
  %1 = add(%0, %0);
  %2 = nn.relu(%1);
  negative(%2)
}
)")));
  // The same values: the reference interpreter agrees on both forms.
  std::vector<Tensor> inputs = testing::random_inputs(mod, 1);
  testing::expect_all_close(reference::Interpreter(mod).run(inputs),
                            reference::Interpreter(after).run(inputs), 0);
}

TEST(InlineBindings, AModuleWithoutBindingsIsUnchanged) {
  ir::IRModule mod = parse(R"(
def @main(%x: Tensor[(3), float32]) {
  %0 = exp(%x);
  nn.relu(%0)
}
)");
  EXPECT_EQ(print(inline_bindings(mod)), print(mod));
}

}  // namespace
}  // namespace anvil::transform
