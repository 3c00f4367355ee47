// Recurrent layers (ONNX RNN, GRU, LSTM) through the command line over a grid of
// configurations: every direction, both layouts, sequence_lens, initial states, peepholes,
// linear_before_reset, input_forget, clip and the activation functions ONNX lists, on small
// shapes of several sizes; ONNX Runtime's outputs are the oracle.
#include <cmath>
#include <string>

#include "anvil/runtime/npy.h"
#include "cli/cli_fixture.h"

namespace anvil::testing {
namespace {

class CliRecurrent : public CliFixture {
 protected:
  static void SetUpTestSuite() {
    make_scratch_dir(R"(
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(11)
GATES = {'RNN': 1, 'GRU': 3, 'LSTM': 4}

def layer(cell, k, seq, batch, features, hidden, direction='forward', layout=0, bias=True,
          initial=False, lengths=None, peepholes=False, symbolic=False, **attrs):
    """One node and its inputs: returns (nodes, oracle nodes, graph inputs, initializers, feeds,
    outputs). ONNX Runtime runs only layout 0: its oracle for layout 1 is the layout-0 node
    between transposes. symbolic: the sequence length and the batch are named dims of the
    graph's inputs (T, N), the feeds of the given sizes."""
    dirs = 2 if direction == 'bidirectional' else 1
    g = GATES[cell]
    p = '%s%d_' % (cell.lower(), k)
    x_shape = (seq, batch, features) if layout == 0 else (batch, seq, features)
    state_shape = (dirs, batch, hidden) if layout == 0 else (batch, dirs, hidden)
    inits = [numpy_helper.from_array(
                 (rng.standard_normal((dirs, g * hidden, features)) * 0.5).astype(np.float32), p + 'W'),
             numpy_helper.from_array(
                 (rng.standard_normal((dirs, g * hidden, hidden)) * 0.5).astype(np.float32), p + 'R')]
    names = [p + 'X', p + 'W', p + 'R']
    feeds = {p + 'X': rng.standard_normal(x_shape).astype(np.float32)}
    x_dims = list(x_shape)
    if symbolic:
        x_dims[layout], x_dims[1 - layout] = 'T', 'N'
    inputs = [helper.make_tensor_value_info(p + 'X', TensorProto.FLOAT, x_dims)]
    def optional(name, value, as_input=False, batch_axis=None):
        if value is None:
            names.append('')
            return
        names.append(p + name)
        if as_input:
            feeds[p + name] = value
            elem = TensorProto.INT32 if value.dtype == np.int32 else TensorProto.FLOAT
            shape = list(value.shape)
            if symbolic:
                shape[batch_axis] = 'N'
            inputs.append(helper.make_tensor_value_info(p + name, elem, shape))
        else:
            inits.append(numpy_helper.from_array(value, p + name))
    optional('B', (rng.standard_normal((dirs, 2 * g * hidden)) * 0.3).astype(np.float32) if bias else None)
    optional('L', None if lengths is None else np.array(lengths, np.int32), as_input=True,
             batch_axis=0)
    optional('H0', rng.standard_normal(state_shape).astype(np.float32) if initial else None, as_input=True,
             batch_axis=1 - layout)
    if cell == 'LSTM':
        optional('C0', rng.standard_normal(state_shape).astype(np.float32) if initial else None, as_input=True,
                 batch_axis=1 - layout)
        optional('P', (rng.standard_normal((dirs, 3 * hidden)) * 0.5).astype(np.float32) if peepholes else None)
    while names and names[-1] == '':
        names.pop()
    outs = [p + 'Y', p + 'Yh'] + ([p + 'Yc'] if cell == 'LSTM' else [])
    node = helper.make_node(cell, names, outs, hidden_size=hidden, direction=direction,
                            **({'layout': layout} if layout else {}), **attrs)
    outputs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs]
    oracle = [node]
    if layout == 1:
        t = lambda src, dst, perm: helper.make_node('Transpose', [src], [dst], perm=perm)
        before = [t(n, n + '_t', [1, 0, 2]) for i, n in enumerate(names)
                  if n and i in (0, 5, 6)]
        inner = [n + '_t' if n and i in (0, 5, 6) else n for i, n in enumerate(names)]
        after = [t(o + '_t', o, [2, 0, 1, 3] if i == 0 else [1, 0, 2]) for i, o in enumerate(outs)]
        oracle = before + [helper.make_node(cell, inner, [o + '_t' for o in outs],
                                            hidden_size=hidden, direction=direction, **attrs)] + after
    return [node], oracle, inputs, inits, feeds, outputs

def save(name, layers, opset=14):
    nodes, oracle, inputs, inits, feeds, outputs = [], [], [], [], {}, []
    for node, o_nodes, i, n, f, o in layers:
        nodes += node; oracle += o_nodes; inputs += i; inits += n; feeds.update(f); outputs += o
    def model_of(node_list):
        graph = helper.make_graph(node_list, name, inputs, outputs, inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)])
        model.ir_version = 8
        return model
    path = os.path.join(out_dir, name + '.onnx')
    onnx.save(model_of(nodes), path)
    np.savez(os.path.join(out_dir, name + '.in.npz'), **feeds)
    session = ort.InferenceSession(model_of(oracle).SerializeToString(),
                                   providers=['CPUExecutionProvider'])
    results = session.run(None, feeds)
    np.savez(os.path.join(out_dir, name + '.ort.npz'),
             **{'output_%d' % i: r for i, r in enumerate(results)})

save('rnn_grid', [
    layer('RNN', 0, 5, 2, 3, 4),
    layer('RNN', 1, 7, 3, 5, 6, 'reverse', initial=True),
    layer('RNN', 2, 4, 3, 2, 3, 'bidirectional', layout=1, lengths=[4, 1, 3]),
    layer('RNN', 3, 6, 1, 4, 5, activations=['Relu'], bias=False),
    layer('RNN', 4, 3, 2, 3, 4, 'bidirectional', activations=['Affine', 'LeakyRelu'],
          activation_alpha=[0.7, 0.2], activation_beta=[0.1, 0.0], clip=0.9, initial=True),
    layer('RNN', 5, 1, 4, 2, 3, 'reverse', lengths=[1, 1, 1, 1]),
])
save('gru_grid', [
    layer('GRU', 0, 5, 2, 3, 4),
    layer('GRU', 1, 6, 3, 4, 5, 'reverse', initial=True, lengths=[6, 2, 4]),
    layer('GRU', 2, 4, 2, 3, 6, 'bidirectional', linear_before_reset=1),
    layer('GRU', 3, 3, 3, 5, 4, layout=1, linear_before_reset=1, initial=True),
    layer('GRU', 4, 5, 2, 2, 3, 'bidirectional', lengths=[3, 5], clip=1.5,
          activations=['HardSigmoid', 'ScaledTanh', 'Sigmoid', 'Softsign'],
          activation_alpha=[0.3, 1.2], activation_beta=[0.4, 0.8]),
    layer('GRU', 5, 2, 1, 4, 8, bias=False, activations=['Sigmoid', 'Elu'], activation_alpha=[0.5]),
])
save('lstm_grid', [
    layer('LSTM', 0, 5, 2, 3, 4),
    layer('LSTM', 1, 6, 3, 4, 5, 'reverse', initial=True, peepholes=True),
    layer('LSTM', 2, 4, 2, 3, 6, 'bidirectional', lengths=[2, 4], initial=True),
    layer('LSTM', 3, 3, 3, 5, 4, layout=1, peepholes=True, lengths=[3, 1, 2]),
    layer('LSTM', 4, 5, 2, 2, 3, 'bidirectional', clip=0.8, input_forget=1,
          activations=['Sigmoid', 'Softplus', 'ThresholdedRelu', 'HardSigmoid', 'Tanh', 'Relu'],
          activation_alpha=[0.1, 0.3], activation_beta=[0.6]),
    layer('LSTM', 5, 7, 1, 4, 8, bias=False, layout=1, initial=True),
])
# The oldest versions of the ops (no layout attribute).
save('recurrent_opset7', [layer('LSTM', 0, 4, 2, 3, 4, 'bidirectional', peepholes=True),
                          layer('GRU', 1, 4, 2, 3, 4, 'reverse'),
                          layer('RNN', 2, 4, 2, 3, 4, initial=True)], opset=7)
# Sequences whose length (and batch) are named dims: one loop of the VM per direction, compiled
# once and run at the length fed, down to a single step.
for name, seq, batch in (('recurrent_symbolic', 9, 3), ('recurrent_symbolic_one_step', 1, 2)):
    save(name, [
        layer('LSTM', 0, seq, batch, 3, 4, 'bidirectional', initial=True, peepholes=True,
              symbolic=True),
        layer('GRU', 1, seq, batch, 4, 5, 'reverse', linear_before_reset=1, symbolic=True,
              lengths=[max(1, seq - i) for i in range(batch)]),
        layer('RNN', 2, seq, batch, 2, 3, layout=1, initial=True, symbolic=True),
        layer('LSTM', 3, seq, batch, 3, 4, 'reverse', lengths=[seq] * batch, symbolic=True),
    ])
# Bad input: a wrong hidden size, an unknown activation, an unknown direction.
def bad(name, node_attrs, x_shape=(3, 1, 2), hidden=2):
    graph = helper.make_graph(
        [helper.make_node('GRU', ['X', 'W', 'R'], ['Y'], name='gru_bad', **node_attrs)], name,
        [helper.make_tensor_value_info('X', TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info('Y', TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.zeros((1, 3 * hidden, 2), np.float32), 'W'),
         numpy_helper.from_array(np.zeros((1, 3 * hidden, hidden), np.float32), 'R')])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 14)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out_dir, name + '.onnx'))
bad('wrong_hidden', {'hidden_size': 3})
bad('unknown_activation', {'hidden_size': 2, 'activations': ['Sigmoid', 'Swish']})
bad('bad_direction', {'hidden_size': 2, 'direction': 'sideways'})
)");
  }

  static void expect_rejected(const std::string& model, const std::string& words) {
    CommandResult r = run_anvil({"compile", path(model + ".onnx"), "-o", path(model + ".tar")});
    expect_one_line_error(r, 1, {"gru_bad", words}, model);
  }
};

TEST_F(CliRecurrent, RnnGridMatchesOnnxRuntime) { expect_run_matches_oracle("rnn_grid"); }
TEST_F(CliRecurrent, GruGridMatchesOnnxRuntime) { expect_run_matches_oracle("gru_grid"); }
TEST_F(CliRecurrent, LstmGridMatchesOnnxRuntime) { expect_run_matches_oracle("lstm_grid"); }
TEST_F(CliRecurrent, OpsetSevenLayersMatchOnnxRuntime) {
  expect_run_matches_oracle("recurrent_opset7");
}

TEST_F(CliRecurrent, SymbolicSequenceLengthMatchesOnnxRuntime) {
  expect_run_matches_oracle("recurrent_symbolic");
  expect_run_matches_oracle("recurrent_symbolic_one_step");
}

TEST_F(CliRecurrent, BadLayersAreOneLineNamingTheNode) {
  expect_rejected("wrong_hidden", "hidden_size 3");
  expect_rejected("unknown_activation", "Swish");
  expect_rejected("bad_direction", "sideways");
}

}  // namespace
}  // namespace anvil::testing
