// The fused transformer ops of ONNX Runtime's transformer optimizer (com.microsoft Attention,
// MultiHeadAttention, SkipLayerNormalization, EmbedLayerNormalization, BiasGelu, FastGelu,
// RotaryEmbedding, GroupQueryAttention, ...)
// through the command line over a grid of shapes, masks and attributes; ONNX Runtime's outputs
// are the oracle.
#include <cmath>
#include <string>

#include "anvil/runtime/npy.h"
#include "cli/cli_fixture.h"

namespace anvil::testing {
namespace {

class CliTransformerContrib : public CliFixture {
 protected:
  static void SetUpTestSuite() {
    make_scratch_dir(R"(
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(5)
MS = 'com.microsoft'
F, I32 = TensorProto.FLOAT, TensorProto.INT32

class Model:
    """Nodes whose inputs are random run-time inputs or initializers, every output a graph
    output."""
    def __init__(self):
        self.nodes, self.inputs, self.inits, self.feeds, self.outputs = [], [], [], {}, []
    def value(self, name, array, initializer=False):
        if initializer:
            self.inits.append(numpy_helper.from_array(array, name))
        else:
            self.feeds[name] = array
            elem = {np.float32: F, np.int32: I32, np.int64: TensorProto.INT64}[array.dtype.type]
            self.inputs.append(helper.make_tensor_value_info(name, elem, list(array.shape)))
        return name
    def rand(self, name, shape, scale=1.0, initializer=False):
        return self.value(name, (rng.standard_normal(shape) * scale).astype(np.float32), initializer)
    def node(self, op, inputs, outputs, domain=MS, types=None, **attrs):
        self.nodes.append(helper.make_node(op, inputs, outputs, domain=domain, **attrs))
        types = types or [F] * len(outputs)
        self.outputs += [helper.make_tensor_value_info(o, t, None)
                         for o, t in zip(outputs, types) if o]
    def save(self, name, opset=13):
        graph = helper.make_graph(self.nodes, name, self.inputs, self.outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset),
                                                        helper.make_opsetid(MS, 1)])
        model.ir_version = 8
        path = os.path.join(out_dir, name + '.onnx')
        onnx.save(model, path)
        np.savez(os.path.join(out_dir, name + '.in.npz'), **self.feeds)
        results = ort.InferenceSession(path, providers=['CPUExecutionProvider']).run(None, self.feeds)
        np.savez(os.path.join(out_dir, name + '.ort.npz'),
                 **{'output_%d' % i: r for i, r in enumerate(results)})

# Layer norms and GELUs.
m = Model()
for k, (shape, beta, bias, sum_out) in enumerate([((2, 5, 16), True, True, True),
                                                  ((1, 7, 32), False, False, False),
                                                  ((3, 4, 8), True, False, True)]):
    p = 'sln%d_' % k
    d = shape[-1]
    ins = [m.rand(p + 'x', shape), m.rand(p + 's', shape), m.rand(p + 'g', (d,), initializer=True),
           m.rand(p + 'b', (d,), initializer=True) if beta else '',
           m.rand(p + 'bias', (d,), initializer=True) if bias else '']
    while ins[-1] == '':
        ins.pop()
    m.node('SkipLayerNormalization', ins, [p + 'y', '', '', p + 'sum' if sum_out else ''],
           epsilon=1e-5 * (k + 1))
    q = 'ssln%d_' % k
    # No bias: ONNX Runtime's CPU kernel ignores SkipSimplifiedLayerNormalization's (input 3),
    # which anvil adds as the schema says.
    ins = [m.rand(q + 'x', shape), m.rand(q + 's', shape), m.rand(q + 'g', (d,), initializer=True)]
    m.node('SkipSimplifiedLayerNormalization', ins, [q + 'y'], epsilon=1e-6)
    m.node('SimplifiedLayerNormalization', [m.rand(q + 'x2', shape), q + 'g'], [q + 'rms'],
           domain='', axis=-1, epsilon=1e-5)
    m.node('LayerNormalization', [m.rand(p + 'x2', shape), p + 'g'] + ([p + 'b'] if beta else []),
           [p + 'ln'], domain='', axis=-1, epsilon=1e-5)
    m.node('Gelu', [m.rand(p + 'gx', shape)], [p + 'gelu'])
    m.node('BiasGelu', [m.rand(p + 'bgx', shape), m.rand(p + 'bgb', (d,), initializer=True)],
           [p + 'biasgelu'])
    m.node('FastGelu', [m.rand(p + 'fx', shape)] + ([p + 'bgb'] if bias else []), [p + 'fastgelu'])
m.save('norms_and_gelus')

# BiasAdd has no CPU kernel in ONNX Runtime: numpy is its oracle.
m = Model()
m.node('BiasAdd', [m.rand('x', (2, 6, 8)), m.rand('bias', (8,), initializer=True),
                   m.rand('skip', (2, 6, 8))], ['y'])
graph = helper.make_graph(m.nodes, 'bias_add', m.inputs, m.outputs, m.inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13), helper.make_opsetid(MS, 1)])
model.ir_version = 8
onnx.save(model, os.path.join(out_dir, 'bias_add.onnx'))
np.savez(os.path.join(out_dir, 'bias_add.in.npz'), **m.feeds)
bias = numpy_helper.to_array(m.inits[0])
np.savez(os.path.join(out_dir, 'bias_add.ort.npz'), output_0=m.feeds['x'] + bias + m.feeds['skip'])

# Attention over every mask format, unidirectional, qkv_hidden_sizes and scale.
def attention(k, batch, seq, hidden, heads, mask=None, v_hidden=None, **attrs):
    m = Model()
    p = 'att%d_' % k
    v_hidden = v_hidden or hidden
    total = 2 * hidden + v_hidden
    ins = [m.rand(p + 'x', (batch, seq, hidden)),
           m.rand(p + 'w', (hidden, total), 0.2, initializer=True),
           m.rand(p + 'b', (total,), 0.2, initializer=True)]
    if mask is not None:
        ins.append(m.value(p + 'mask', mask))
    if v_hidden != hidden:
        attrs['qkv_hidden_sizes'] = [hidden, hidden, v_hidden]
    m.node('Attention', ins, [p + 'y'], num_heads=heads, **attrs)
    m.save('attention%d' % k)
attention(0, 2, 6, 16, 2)
attention(1, 2, 7, 24, 3, mask=np.array([7, 4], np.int32))
attention(2, 2, 5, 16, 4, mask=np.array([5, 3, 0, 1], np.int32))
attention(3, 3, 6, 16, 2, mask=(rng.random((3, 6)) > 0.3).astype(np.int32))
attention(4, 1, 6, 16, 2, mask=(rng.random((1, 6, 6)) > 0.3).astype(np.int32))
attention(5, 2, 5, 16, 2, unidirectional=1)
attention(6, 2, 4, 16, 2, v_hidden=8, scale=0.3)

# MultiHeadAttention: separate query, key and value, with bias and an attention bias.
def mha(k, batch, seq, keys, width, v_width, heads, bias=False, mask=None, attention_bias=False,
        **attrs):
    m = Model()
    p = 'mha%d_' % k
    ins = [m.rand(p + 'q', (batch, seq, width)), m.rand(p + 'k', (batch, keys, width)),
           m.rand(p + 'v', (batch, keys, v_width)),
           m.rand(p + 'bias', (2 * width + v_width,), initializer=True) if bias else '',
           m.value(p + 'mask', mask) if mask is not None else '',
           m.rand(p + 'ab', (batch, heads, seq, keys)) if attention_bias else '']
    while ins[-1] == '':
        ins.pop()
    m.node('MultiHeadAttention', ins, [p + 'y'], num_heads=heads, **attrs)
    m.save('mha%d' % k)
mha(0, 2, 5, 7, 16, 16, 2)
mha(1, 2, 4, 6, 16, 8, 4, bias=True)
mha(2, 1, 3, 5, 12, 12, 3, attention_bias=True)
mha(3, 2, 5, 5, 16, 16, 2, bias=True, unidirectional=1, scale=0.5)

# EmbedLayerNormalization with and without segments, mask and position ids.
def embed(k, batch, seq, hidden, segments=True, mask=True, positions=False):
    m = Model()
    p = 'emb%d_' % k
    ids = m.value(p + 'ids', rng.integers(0, 50, (batch, seq)).astype(np.int32))
    seg = m.value(p + 'seg', rng.integers(0, 2, (batch, seq)).astype(np.int32)) if segments else ''
    ins = [ids, seg, m.rand(p + 'word', (50, hidden), initializer=True),
           m.rand(p + 'pos', (16, hidden), initializer=True),
           m.rand(p + 'segw', (2, hidden), initializer=True) if segments else '',
           m.rand(p + 'g', (hidden,), initializer=True), m.rand(p + 'b', (hidden,), initializer=True),
           m.value(p + 'mask', (rng.random((batch, seq)) > 0.3).astype(np.int32)) if mask else '',
           m.value(p + 'posid', rng.integers(0, 16, (batch, seq)).astype(np.int32)) if positions else '']
    while ins[-1] == '':
        ins.pop()
    m.node('EmbedLayerNormalization', ins, [p + 'y', p + 'mask_index', p + 'sum'],
           types=[F, I32, F], epsilon=1e-12)
    m.save('embed%d' % k)
embed(0, 2, 6, 16)
embed(1, 1, 9, 8, segments=False, mask=False)
embed(2, 3, 5, 16, positions=True)

# RotaryEmbedding: 3-D (with and without num_heads) and 4-D inputs, halves and interleaved,
# partial rotation, position ids per token or one offset.
def rotary(k, shape, interleaved=0, offset=False, heads=0, dim=0):
    m = Model()
    p = 'rot%d_' % k
    batch, steps = shape[0], shape[2] if len(shape) == 4 else shape[1]
    # Without num_heads a 3-D input's heads are as wide as the rotation (the caches say it).
    head = shape[3] if len(shape) == 4 else (shape[2] // heads if heads else 8)
    half = (dim or head) // 2
    ids = (np.array([3], np.int64) if offset else rng.integers(0, 16, (batch, steps)).astype(np.int64))
    angles = np.outer(np.arange(32), 1.0 / 10000 ** (np.arange(half) / half)).astype(np.float32)
    ins = [m.rand(p + 'x', shape), m.value(p + 'ids', ids),
           m.value(p + 'cos', np.cos(angles), initializer=True),
           m.value(p + 'sin', np.sin(angles), initializer=True)]
    attrs = {'interleaved': interleaved}
    if heads:
        attrs['num_heads'] = heads
    if dim:
        attrs['rotary_embedding_dim'] = dim
    m.node('RotaryEmbedding', ins, [p + 'y'], **attrs)
    m.save('rotary%d' % k)
rotary(0, (2, 5, 32), heads=4)
rotary(1, (2, 5, 32), interleaved=1, heads=2)
rotary(2, (1, 6, 24))
rotary(3, (2, 3, 4, 16), offset=True)
rotary(4, (2, 3, 4, 16), interleaved=1)
rotary(5, (2, 4, 32), heads=2, dim=8, offset=True)

# GroupQueryAttention: token steps with rows of different lengths (a cache longer than the
# keys, or shorter so that present grows), prompts (rows without padding: ONNX Runtime leaves
# the outputs of padding queries unspecified), a local window, rotary embedding, packed q/k/v,
# one key/value head for four query heads.
def gqa(k, batch, steps, heads, kv_heads, head, past, seqlens, total, packed=False, **attrs):
    m = Model()
    p = 'gqa%d_' % k
    if packed:
        ins = [m.rand(p + 'qkv', (batch, steps, (heads + 2 * kv_heads) * head)), '', '']
    else:
        ins = [m.rand(p + 'q', (batch, steps, heads * head)),
               m.rand(p + 'k', (batch, steps, kv_heads * head)),
               m.rand(p + 'v', (batch, steps, kv_heads * head))]
    ins += [m.rand(p + 'pk', (batch, kv_heads, past, head)),
            m.rand(p + 'pv', (batch, kv_heads, past, head)),
            m.value(p + 'seqlens', np.array(seqlens, np.int32)),
            m.value(p + 'total', np.array(total, np.int32), initializer=True)]
    if attrs.get('do_rotary'):
        angles = np.outer(np.arange(32), 1.0 / 10000 ** (np.arange(head // 2) / (head // 2)))
        ins += [m.value(p + 'cos', np.cos(angles).astype(np.float32), initializer=True),
                m.value(p + 'sin', np.sin(angles).astype(np.float32), initializer=True)]
    m.node('GroupQueryAttention', ins, [p + 'y', p + 'present_k', p + 'present_v'],
           num_heads=heads, kv_num_heads=kv_heads, **attrs)
    m.save('gqa%d' % k)
gqa(0, 2, 1, 4, 2, 8, 5, [5, 3], 6)
gqa(1, 2, 1, 4, 1, 8, 8, [5, 3], 6)
gqa(2, 2, 4, 4, 2, 8, 0, [3, 3], 4)
gqa(3, 2, 1, 4, 2, 8, 5, [5, 3], 6, local_window_size=2)
gqa(4, 2, 5, 4, 2, 8, 0, [4, 4], 5, local_window_size=2)
gqa(5, 2, 1, 4, 2, 16, 6, [6, 2], 7, do_rotary=1)
gqa(6, 1, 3, 4, 2, 16, 0, [2], 3, do_rotary=1, rotary_interleaved=1)
gqa(7, 2, 1, 4, 2, 8, 5, [5, 3], 6, packed=True)

# Bad input: past state, packed query/key/value.
m = Model()
m.node('Attention', [m.rand('x', (1, 4, 8)), m.rand('w', (8, 24), initializer=True), '', '',
                     m.rand('past', (2, 1, 2, 2, 4))], ['y'], num_heads=2, name='attention_past')
graph = helper.make_graph(m.nodes, 'bad', m.inputs, m.outputs, m.inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13), helper.make_opsetid(MS, 1)])
model.ir_version = 8
onnx.save(model, os.path.join(out_dir, 'attention_past.onnx'))
)");
  }
};

TEST_F(CliTransformerContrib, NormsAndGelusMatchOnnxRuntime) {
  expect_run_matches_oracle("norms_and_gelus");
}

TEST_F(CliTransformerContrib, BiasAddMatchesNumpy) { expect_run_matches_oracle("bias_add"); }

TEST_F(CliTransformerContrib, AttentionOverEveryMaskFormatMatchesOnnxRuntime) {
  for (int k = 0; k < 7; ++k) expect_run_matches_oracle("attention" + std::to_string(k));
}

TEST_F(CliTransformerContrib, MultiHeadAttentionMatchesOnnxRuntime) {
  for (int k = 0; k < 4; ++k) expect_run_matches_oracle("mha" + std::to_string(k));
}

TEST_F(CliTransformerContrib, EmbedLayerNormalizationMatchesOnnxRuntime) {
  for (int k = 0; k < 3; ++k) expect_run_matches_oracle("embed" + std::to_string(k));
}

TEST_F(CliTransformerContrib, RotaryEmbeddingMatchesOnnxRuntime) {
  for (int k = 0; k < 6; ++k) expect_run_matches_oracle("rotary" + std::to_string(k));
}

TEST_F(CliTransformerContrib, GroupQueryAttentionMatchesOnnxRuntime) {
  for (int k = 0; k < 8; ++k) expect_run_matches_oracle("gqa" + std::to_string(k));
}

TEST_F(CliTransformerContrib, PastStateIsOneLineNamingTheNode) {
  CommandResult r = run_anvil({"compile", path("attention_past.onnx"), "-o", path("p.tar")});
  expect_one_line_error(r, 1, {"attention_past", "past state"});
}

}  // namespace
}  // namespace anvil::testing
