// Control flow through the command line, as a user runs it (`anvil run`, every input given at
// run time), against ONNX Runtime:
// - If on a run-time condition whose branches give different shapes, as exporters write them
//   (torchvision's detection post-processing returns a static empty tensor in one branch and a
//   data-dependent one in the other): the If's type keeps what the branches share and leaves
//   the rest unknown, and the VM runs either branch;
// - Loop with a trip count and a condition given at run time (trip counts 0, 1 and 100, the
//   exit taken early by the data), a while-loop without a trip count, a carried value that
//   grows, and scan outputs: compiled as VM loops, not unrolled;
// - Scan over a length known only at run time, or longer than unrolling takes, with reversed
//   inputs and outputs and an output axis other than 0: the same loops.
#include <fstream>
#include <iterator>
#include <regex>
#include <string>

#include "cli/cli_fixture.h"

namespace anvil::testing {
namespace {

class CliControlFlow : public CliFixture {
 protected:
  static void SetUpTestSuite() {
    make_scratch_dir(R"(
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(5)

def branch(name, nodes, outputs):
    return helper.make_graph(nodes, name, [], outputs)

def save(name, nodes, inputs, outputs, feeds_by_case, initializers=()):
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              [numpy_helper.from_array(v, k) for k, v in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)])
    model.ir_version = 8
    path = os.path.join(out_dir, name + '.onnx')
    onnx.save(model, path)
    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])
    for case, feeds in feeds_by_case.items():
        got = session.run(None, feeds)
        onnx.save(model, os.path.join(out_dir, f'{name}_{case}.onnx'))
        np.savez(os.path.join(out_dir, f'{name}_{case}.in.npz'), **feeds)
        np.savez(os.path.join(out_dir, f'{name}_{case}.ort.npz'),
                 **{'output_%d' % i: v for i, v in enumerate(got)})

def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)

x = rng.standard_normal(12).astype(np.float32)
x[::3] = 0
def flag_cases(**extra):
    return {'then': {'flag': np.array(True), **extra}, 'else': {'flag': np.array(False), **extra}}

# Detection's shape: no boxes (a static empty tensor) or the indices of the nonzero scores.
empty = numpy_helper.from_array(np.zeros(0, np.int64), 'none')
save('if_empty_or_nonzero', [
    helper.make_node('If', ['flag'], ['picked'],
        then_branch=branch('then', [helper.make_node('Constant', [], ['e'], value=empty)],
                           [vi('e', TensorProto.INT64, [0])]),
        else_branch=branch('else', [helper.make_node('NonZero', ['x'], ['nz']),
                                    helper.make_node('Squeeze', ['nz', 'axis0'], ['s'])],
                           [vi('s', TensorProto.INT64, ['n'])])),
    helper.make_node('Mul', ['picked', 'two'], ['doubled']),
    helper.make_node('Size', ['picked'], ['count'])],
    [vi('flag', TensorProto.BOOL, []), vi('x', TensorProto.FLOAT, [12])],
    [vi('doubled', TensorProto.INT64, None), vi('count', TensorProto.INT64, [])],
    flag_cases(x=x), [('axis0', np.array([0], np.int64)), ('two', np.array(2, np.int64))])

# Two static lengths (3 and 5) and a pair of outputs, one of them alike in both branches;
# elementwise ops and a reduction run on the joined (?) shape.
def slice_node(out, end):
    return helper.make_node('Slice', ['x', 'zero', 'end%d' % end], [out])
nodes = [
    helper.make_node('Constant', [], ['zero'], value=numpy_helper.from_array(np.array([0], np.int64))),
    helper.make_node('Constant', [], ['end3'], value=numpy_helper.from_array(np.array([3], np.int64))),
    helper.make_node('Constant', [], ['end5'], value=numpy_helper.from_array(np.array([5], np.int64))),
    helper.make_node('If', ['flag'], ['part', 'scaled'],
        then_branch=branch('then', [slice_node('a', 3), helper.make_node('Neg', ['x'], ['na'])],
                           [vi('a', TensorProto.FLOAT, [3]), vi('na', TensorProto.FLOAT, [12])]),
        else_branch=branch('else', [slice_node('b', 5), helper.make_node('Abs', ['x'], ['nb'])],
                           [vi('b', TensorProto.FLOAT, [5]), vi('nb', TensorProto.FLOAT, [12])])),
    helper.make_node('Exp', ['part'], ['e']),
    helper.make_node('ReduceSum', ['e'], ['total'], keepdims=0),
    helper.make_node('Add', ['scaled', 'total'], ['y'])]
save('if_two_lengths', nodes, [vi('flag', TensorProto.BOOL, []), vi('x', TensorProto.FLOAT, [12])],
     [vi('e', TensorProto.FLOAT, None), vi('y', TensorProto.FLOAT, [12])], flag_cases(x=x))

# Branches of different rank: a (3, 4) matrix or the flat 12.
save('if_two_ranks', [
    helper.make_node('If', ['flag'], ['r'],
        then_branch=branch('then', [helper.make_node('Reshape', ['x', 'shape34'], ['m'])],
                           [vi('m', TensorProto.FLOAT, [3, 4])]),
        else_branch=branch('else', [helper.make_node('Relu', ['x'], ['f'])],
                           [vi('f', TensorProto.FLOAT, [12])])),
    helper.make_node('Sigmoid', ['r'], ['y'])],
    [vi('flag', TensorProto.BOOL, []), vi('x', TensorProto.FLOAT, [12]),
     vi('shape34', TensorProto.INT64, [2])],
    [vi('y', TensorProto.FLOAT, None)], flag_cases(x=x, shape34=np.array([3, 4], np.int64)))

# Loop(M, cond, v): v <- v * 0.5 + x while the iteration is below M and the sum of v stays
# below the limit; the scan output stacks each iteration's v, the second the iteration number.
body = helper.make_graph([
    helper.make_node('Mul', ['v_in', 'half'], ['vh']),
    helper.make_node('Add', ['vh', 'x'], ['v_out']),
    helper.make_node('ReduceSum', ['v_out'], ['total'], keepdims=0),
    helper.make_node('Less', ['total', 'limit'], ['cond_out']),
    helper.make_node('Identity', ['v_out'], ['scan_v']),
    helper.make_node('Identity', ['i'], ['scan_i'])], 'body',
    [vi('i', TensorProto.INT64, []), vi('cond_in', TensorProto.BOOL, []),
     vi('v_in', TensorProto.FLOAT, [4])],
    [vi('cond_out', TensorProto.BOOL, []), vi('v_out', TensorProto.FLOAT, [4]),
     vi('scan_v', TensorProto.FLOAT, [4]), vi('scan_i', TensorProto.INT64, [])])
# From v = 0 with x summing to 2, v sums to 4 (1 - 2^-k) after k iterations: a limit of 3.6
# stops the loop after the fourth.
def loop_cases(**cases):
    x4 = np.array([0.4, 0.6, 0.5, 0.5], np.float32)
    return {name: {'m': np.array(m, np.int64), 'cond': np.array(c), 'limit': np.array(l, np.float32),
                   'x': x4, 'v0': np.zeros(4, np.float32)} for name, (m, c, l) in cases.items()}
save('loop_counted', [
    helper.make_node('Loop', ['m', 'cond', 'v0'], ['v', 'vs', 'is'], body=body)],
    [vi('m', TensorProto.INT64, []), vi('cond', TensorProto.BOOL, []),
     vi('limit', TensorProto.FLOAT, []), vi('x', TensorProto.FLOAT, [4]),
     vi('v0', TensorProto.FLOAT, [4])],
    [vi('v', TensorProto.FLOAT, [4]), vi('vs', TensorProto.FLOAT, None),
     vi('is', TensorProto.INT64, None)],
    loop_cases(zero=(0, True, 1e9), one=(1, True, 1e9), hundred=(100, True, 1e9),
               false_first=(5, False, 1e9), early=(100, True, 3.6)),
    [('half', np.array(0.5, np.float32))])

# A while-loop: no trip count, the exit decided by the data; the carried value doubles.
body = helper.make_graph([
    helper.make_node('Mul', ['w_in', 'two'], ['w_out']),
    helper.make_node('ReduceSum', ['w_out'], ['s'], keepdims=0),
    helper.make_node('Less', ['s', 'limit'], ['c_out'])], 'body',
    [vi('i', TensorProto.INT64, []), vi('c_in', TensorProto.BOOL, []),
     vi('w_in', TensorProto.FLOAT, [3])],
    [vi('c_out', TensorProto.BOOL, []), vi('w_out', TensorProto.FLOAT, [3])])
save('while_doubling', [
    helper.make_node('Loop', ['', 'go', 'w0'], ['w'], body=body)],
    [vi('go', TensorProto.BOOL, []), vi('limit', TensorProto.FLOAT, []),
     vi('w0', TensorProto.FLOAT, [3])],
    [vi('w', TensorProto.FLOAT, [3])],
    {'stops': {'go': np.array(True), 'limit': np.array(1000, np.float32),
               'w0': np.array([0.5, 1, 0.25], np.float32)},
     'never': {'go': np.array(False), 'limit': np.array(1000, np.float32),
               'w0': np.array([0.5, 1, 0.25], np.float32)}},
    [('two', np.array(2, np.float32))])

# A carried value that grows by a row each iteration (its type has an unknown dim).
body = helper.make_graph([
    helper.make_node('Unsqueeze', ['x', 'axis0'], ['row']),
    helper.make_node('Neg', ['g_in'], ['ng']),
    helper.make_node('Concat', ['ng', 'row'], ['g_out'], axis=0),
    helper.make_node('Identity', ['c_in'], ['c_out'])], 'body',
    [vi('i', TensorProto.INT64, []), vi('c_in', TensorProto.BOOL, []),
     vi('g_in', TensorProto.FLOAT, [None, 3])],
    [vi('c_out', TensorProto.BOOL, []), vi('g_out', TensorProto.FLOAT, [None, 3])])
save('loop_growing', [
    helper.make_node('Loop', ['m', '', 'g0'], ['g'], body=body)],
    [vi('m', TensorProto.INT64, []), vi('x', TensorProto.FLOAT, [3]),
     vi('g0', TensorProto.FLOAT, [1, 3])],
    [vi('g', TensorProto.FLOAT, None)],
    {name: {'m': np.array(m, np.int64), 'x': np.array([1, -2, 3], np.float32),
            'g0': np.array([[0.5, 0.25, -1]], np.float32)} for name, m in
     (('zero', 0), ('one', 1), ('seven', 7))},
    [('axis0', np.array([0], np.int64))])

# Scan-9 over a length given at run time (a named dim) and over 100 static steps: a running sum
# as the state, the scan outputs the state and the element doubled; the second input read from
# the end, the second output reversed and stacked along axis 1.
body = helper.make_graph([
    helper.make_node('Add', ['s_in', 'a'], ['s_out']),
    helper.make_node('Mul', ['b', 'two'], ['b2']),
    helper.make_node('Identity', ['s_out'], ['seen'])], 'body',
    [vi('s_in', TensorProto.FLOAT, [2]), vi('a', TensorProto.FLOAT, [2]),
     vi('b', TensorProto.FLOAT, [3])],
    [vi('s_out', TensorProto.FLOAT, [2]), vi('seen', TensorProto.FLOAT, [2]),
     vi('b2', TensorProto.FLOAT, [3])],
    [numpy_helper.from_array(np.array(2, np.float32), 'two')])
for name, length in (('scan_symbolic', 'steps'), ('scan_long', 100)):
    cases = {str(n): {'s0': np.array([1, -1], np.float32),
                      'xs': rng.standard_normal((n, 2)).astype(np.float32),
                      'ys': rng.standard_normal((n, 3)).astype(np.float32)}
             for n in ((1, 2, 9) if length == 'steps' else (100,))}
    save(name, [
        helper.make_node('Scan', ['s0', 'xs', 'ys'], ['s', 'seen', 'doubled'], body=body,
                         num_scan_inputs=2, scan_input_directions=[0, 1],
                         scan_output_directions=[0, 1], scan_output_axes=[0, 1])],
        [vi('s0', TensorProto.FLOAT, [2]), vi('xs', TensorProto.FLOAT, [length, 2]),
         vi('ys', TensorProto.FLOAT, [length, 3])],
        [vi('s', TensorProto.FLOAT, [2]), vi('seen', TensorProto.FLOAT, None),
         vi('doubled', TensorProto.FLOAT, None)], cases)
)");
  }
};

TEST_F(CliControlFlow, EmptyStaticBranchAgainstADynamicOneMatchesOnnxRuntime) {
  expect_run_matches_oracle("if_empty_or_nonzero_then");
  expect_run_matches_oracle("if_empty_or_nonzero_else");
}

TEST_F(CliControlFlow, BranchesOfTwoStaticLengthsMatchOnnxRuntime) {
  expect_run_matches_oracle("if_two_lengths_then");
  expect_run_matches_oracle("if_two_lengths_else");
}

TEST_F(CliControlFlow, BranchesOfTwoRanksMatchOnnxRuntime) {
  expect_run_matches_oracle("if_two_ranks_then");
  expect_run_matches_oracle("if_two_ranks_else");
}

TEST_F(CliControlFlow, LoopWithRunTimeTripCountAndConditionMatchesOnnxRuntime) {
  for (const char* run : {"zero", "one", "hundred", "false_first", "early"})
    expect_run_matches_oracle(std::string("loop_counted_") + run);
}

TEST_F(CliControlFlow, WhileLoopExitsOnTheDataMatchesOnnxRuntime) {
  expect_run_matches_oracle("while_doubling_stops");
  expect_run_matches_oracle("while_doubling_never");
}

TEST_F(CliControlFlow, LoopCarryingAGrowingTensorMatchesOnnxRuntime) {
  for (const char* run : {"zero", "one", "seven"})
    expect_run_matches_oracle(std::string("loop_growing_") + run);
}

TEST_F(CliControlFlow, ScanOfARunTimeLengthMatchesOnnxRuntime) {
  for (const char* run : {"1", "2", "9"})
    expect_run_matches_oracle(std::string("scan_symbolic_") + run);
  expect_run_matches_oracle("scan_long_100");
}

// The loop is compiled, not unrolled: one package serves every trip count, and its bytecode
// jumps back.
TEST_F(CliControlFlow, LoopCompilesToOneVmPackageWithABackwardJump) {
  CommandResult r = run_anvil(
      {"compile", path("loop_counted.onnx"), "-o", path("loop_counted.tar"), "--dump-code", "vm"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream file(path("loop_counted.tar.vm"));
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::smatch back;
  ASSERT_TRUE(std::regex_search(text, back, std::regex("\n +([0-9]+): goto ([0-9]+)\n"))) << text;
  EXPECT_LT(std::stoi(back[2]), std::stoi(back[1])) << text;
}

}  // namespace
}  // namespace anvil::testing
