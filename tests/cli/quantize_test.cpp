// Quantized ONNX models through the command line: small QDQ and QOperator graphs (ONNX's
// QLinearConv / QLinearMatMul / DynamicQuantizeLinear and ONNX Runtime's com.microsoft ops)
// compiled and run, ONNX Runtime's outputs the oracle; and malformed quantization (a zero
// scale, a zero point out of range or of the wrong type, a per-axis scale of the wrong length)
// rejected with one line naming the node.
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "anvil/runtime/npy.h"
#include "cli/cli_fixture.h"

namespace anvil::testing {
namespace {

class CliQuantized : public CliFixture {
 protected:
  static void SetUpTestSuite() {
    make_scratch_dir(R"(
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(3)
def tensor(name, array):
    return numpy_helper.from_array(np.asarray(array), name)
def save(name, nodes, inputs, outputs, inits, feeds, opsets=(('', 13),), check=True, run=True):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    model.ir_version = 8
    if check:
        onnx.checker.check_model(model)
    path = os.path.join(out_dir, name + '.onnx')
    onnx.save(model, path)
    np.savez(os.path.join(out_dir, name + '.in.npz'), **feeds)
    if run:
        session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])
        results = session.run(None, feeds)
        np.savez(os.path.join(out_dir, name + '.ort.npz'),
                 **{'output_%d' % i: r for i, r in enumerate(results)})
u8 = lambda n, s: helper.make_tensor_value_info(n, TensorProto.UINT8, list(s))
f32 = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s))
x = rng.standard_normal((1, 8, 9, 9)).astype(np.float32)
# Weights of 7 bits: without VNNI, ONNX Runtime's uint8 x int8 kernels sum pairs of products in
# saturating int16 (vpmaddubsw), so 255 * 127 * 2 would clip; within +-64 no pair can, and its
# outputs are exact on every x86 host. The full int8 range is tested against the reference
# kernels (tests/topi/x86_int8_test.cpp).
W8 = 64

# QDQ: quantize -> (dequantize -> conv (per-channel int8 weights, int32 bias) -> relu ->
# quantize) -> residual add of two dequantized values -> quantize -> dequantize.
w = rng.integers(-W8, W8 + 1, (16, 8, 3, 3)).astype(np.int8)
ws = (rng.random(16) * 0.01 + 0.002).astype(np.float32)
b = rng.integers(-3000, 3000, 16).astype(np.int32)
nodes = [
    helper.make_node('QuantizeLinear', ['x', 'xs', 'xz'], ['xq']),
    helper.make_node('DequantizeLinear', ['xq', 'xs', 'xz'], ['xd']),
    helper.make_node('DequantizeLinear', ['w', 'ws', 'wz'], ['wd'], axis=0),
    helper.make_node('DequantizeLinear', ['b', 'bs', 'bz'], ['bd'], axis=0),
    helper.make_node('Conv', ['xd', 'wd', 'bd'], ['c'], pads=[1, 1, 1, 1]),
    helper.make_node('Relu', ['c'], ['r']),
    helper.make_node('QuantizeLinear', ['r', 'ys', 'yz'], ['yq']),
    helper.make_node('DequantizeLinear', ['yq', 'ys', 'yz'], ['yd']),
    helper.make_node('Conv', ['xd', 'wd', 'bd'], ['c2'], pads=[1, 1, 1, 1]),
    helper.make_node('QuantizeLinear', ['c2', 'ys2', 'yz2'], ['y2q']),
    helper.make_node('DequantizeLinear', ['y2q', 'ys2', 'yz2'], ['y2d']),
    helper.make_node('Add', ['yd', 'y2d'], ['s']),
    helper.make_node('QuantizeLinear', ['s', 'ss', 'sz'], ['sq']),
    helper.make_node('DequantizeLinear', ['sq', 'ss', 'sz'], ['out']),
]
inits = [tensor('xs', np.float32(0.02)), tensor('xz', np.uint8(120)), tensor('w', w),
         tensor('ws', ws), tensor('wz', np.zeros(16, np.int8)), tensor('b', b),
         tensor('bs', (ws * np.float32(0.02)).astype(np.float32)), tensor('bz', np.zeros(16, np.int32)),
         tensor('ys', np.float32(0.05)), tensor('yz', np.uint8(0)),
         tensor('ys2', np.float32(0.04)), tensor('yz2', np.uint8(128)),
         tensor('ss', np.float32(0.07)), tensor('sz', np.uint8(100))]
save('qdq_block', nodes, [f32('x', x.shape)], [f32('out', (1, 16, 9, 9))], inits, {'x': x})

# The same kind of block with int8 activations (quantize_static's default): a 3x3 conv, a
# depthwise conv and a MatMul whose data is int8, flipped to uint8 for the blocked kernels.
i8 = lambda n, s: helper.make_tensor_value_info(n, TensorProto.INT8, list(s))
xs8 = rng.standard_normal((1, 16, 9, 9)).astype(np.float32)
w3 = rng.integers(-W8, W8 + 1, (16, 16, 3, 3)).astype(np.int8)
wd = rng.integers(-W8, W8 + 1, (16, 1, 3, 3)).astype(np.int8)
wm = rng.integers(-W8, W8 + 1, (9, 12)).astype(np.int8)
nodes = [
    helper.make_node('QuantizeLinear', ['x', 'xs', 'xz'], ['xq']),
    helper.make_node('DequantizeLinear', ['xq', 'xs', 'xz'], ['xd']),
    helper.make_node('DequantizeLinear', ['w', 'ws', 'wz'], ['wd'], axis=0),
    helper.make_node('Conv', ['xd', 'wd'], ['c'], pads=[1, 1, 1, 1]),
    helper.make_node('Relu', ['c'], ['r']),
    helper.make_node('QuantizeLinear', ['r', 'ys', 'yz'], ['yq']),
    helper.make_node('DequantizeLinear', ['yq', 'ys', 'yz'], ['yd']),
    helper.make_node('DequantizeLinear', ['dw', 'dws', 'dwz'], ['dwd'], axis=0),
    helper.make_node('Conv', ['yd', 'dwd'], ['d'], pads=[1, 1, 1, 1], group=16),
    helper.make_node('QuantizeLinear', ['d', 'ds', 'dz'], ['dq']),
    helper.make_node('DequantizeLinear', ['dq', 'ds', 'dz'], ['dd']),
    helper.make_node('DequantizeLinear', ['m', 'ms', 'mz'], ['md']),
    helper.make_node('MatMul', ['dd', 'md'], ['p']),
    helper.make_node('QuantizeLinear', ['p', 'ps', 'pz'], ['out']),
]
inits = [tensor('xs', np.float32(0.02)), tensor('xz', np.int8(-10)), tensor('w', w3),
         tensor('ws', (rng.random(16) * 0.004 + 0.001).astype(np.float32)),
         tensor('wz', np.zeros(16, np.int8)), tensor('ys', np.float32(0.05)),
         tensor('yz', np.int8(-128)), tensor('dw', wd),
         tensor('dws', (rng.random(16) * 0.01 + 0.002).astype(np.float32)),
         tensor('dwz', np.zeros(16, np.int8)), tensor('ds', np.float32(0.04)),
         tensor('dz', np.int8(7)), tensor('m', wm), tensor('ms', np.float32(0.01)),
         tensor('mz', np.int8(0)), tensor('ps', np.float32(0.03)), tensor('pz', np.int8(-3))]
save('qdq_signed', nodes, [f32('x', xs8.shape)], [i8('out', (1, 16, 9, 12))], inits, {'x': xs8})

# Grouped convolutions (ResNeXt / RegNet style): 16, 8 and 4 output channels a group take the
# blocked kernel, 2 input channels a group (no multiple of 4) the generic schedule; uint8 and
# int8 activations.
def grouped(name, groups, cin, cout, k, act):
    xg = rng.standard_normal((1, cin, 8, 8)).astype(np.float32)
    wg = rng.integers(-W8, W8 + 1, (cout, cin // groups, k, k)).astype(np.int8)
    zero = (lambda v: np.int8(v - 128)) if act == 'int8' else np.uint8
    nodes = [
        helper.make_node('QuantizeLinear', ['x', 'xs', 'xz'], ['xq']),
        helper.make_node('DequantizeLinear', ['xq', 'xs', 'xz'], ['xd']),
        helper.make_node('DequantizeLinear', ['w', 'ws', 'wz'], ['wd'], axis=0),
        helper.make_node('Conv', ['xd', 'wd'], ['c'], pads=[k // 2] * 4, group=groups),
        helper.make_node('QuantizeLinear', ['c', 'ys', 'yz'], ['out'])]
    inits = [tensor('xs', np.float32(0.03)), tensor('xz', zero(131)), tensor('w', wg),
             tensor('ws', (rng.random(cout) * 0.004 + 0.001).astype(np.float32)),
             tensor('wz', np.zeros(cout, np.int8)), tensor('ys', np.float32(0.05)),
             tensor('yz', zero(120))]
    elem = TensorProto.INT8 if act == 'int8' else TensorProto.UINT8
    save(name, nodes, [f32('x', xg.shape)],
         [helper.make_tensor_value_info('out', elem, [1, cout, 8, 8])], inits, {'x': xg})
grouped('grouped2', 2, 32, 32, 3, 'uint8')
grouped('grouped4', 4, 32, 64, 1, 'int8')
grouped('grouped8', 8, 32, 32, 3, 'uint8')
grouped('grouped16', 16, 32, 32, 3, 'int8')

# Weights with zero points (asymmetric int8, uint8 as quantize_static's QUInt8 writes them):
# the blocked kernel plus a window-sum term (one output block of it for plain convolutions and
# MatMul, the convolution's own shape for grouped and depthwise ones); uint8 weights centred on
# 128 are symmetric once shifted. Weights within +-W8 of their zero point.
def weights_with_zero_point(shape, wtype, zp):
    lo, hi = (-128, 127) if wtype == 'int8' else (0, 255)
    zp = np.asarray(zp).reshape((-1,) + (1,) * (len(shape) - 1))
    v = zp.astype(np.int64) + rng.integers(-W8, W8 + 1, shape)
    return np.clip(v, lo, hi).astype(wtype)
def asym(name, cin, cout, k, stride, groups, wtype, wz, act='uint8', run=True, bias=False):
    xa = rng.standard_normal((1, cin, 9, 10)).astype(np.float32)
    wa = weights_with_zero_point((cout, cin // groups, k, k), wtype, wz)
    zero = (lambda v: np.int8(v - 128)) if act == 'int8' else np.uint8
    ws = (rng.random(cout) * 0.004 + 0.001).astype(np.float32)
    nodes = [
        helper.make_node('QuantizeLinear', ['x', 'xs', 'xz'], ['xq']),
        helper.make_node('DequantizeLinear', ['xq', 'xs', 'xz'], ['xd']),
        helper.make_node('DequantizeLinear', ['w', 'ws', 'wz'], ['wd'], axis=0),
        helper.make_node('Conv', ['xd', 'wd'] + (['bd'] if bias else []), ['c'],
                         pads=[k // 2] * 4, strides=[stride] * 2, group=groups),
        helper.make_node('QuantizeLinear', ['c', 'ys', 'yz'], ['out'])]
    inits = [tensor('xs', np.float32(0.03)), tensor('xz', zero(131)), tensor('w', wa),
             tensor('ws', ws), tensor('wz', np.asarray(wz, dtype=wtype)),
             tensor('ys', np.float32(0.05)), tensor('yz', zero(120))]
    if bias:
        # As quantize_static writes a per-tensor bias: a [1] scale beside a scalar zero point,
        # the default axis 1 over rank-1 data. One scale for every channel, so ws is too.
        # (ONNX Runtime's QLinearConv lands up to 4 steps from the exact result here, so the
        # interpreter is the oracle.)
        ws[:] = ws[0]
        nodes.insert(3, helper.make_node('DequantizeLinear', ['b', 'bs', 'bz'], ['bd']))
        inits += [tensor('b', rng.integers(-2000, 2000, cout).astype(np.int32)),
                  tensor('bs', np.array([0.03 * ws[0]], np.float32)),
                  tensor('bz', np.int32(0))]
    elem = TensorProto.INT8 if act == 'int8' else TensorProto.UINT8
    oh, ow = (9 + 2 * (k // 2) - k) // stride + 1, (10 + 2 * (k // 2) - k) // stride + 1
    save(name, nodes, [f32('x', xa.shape)],
         [helper.make_tensor_value_info('out', elem, [1, cout, oh, ow])], inits, {'x': xa},
         run=run)
# ONNX Runtime's QLinearConv wants one zero point for all channels: the per-channel ones
# (different in each channel) are checked against anvil's reference interpreter only.
asym('asym_int8_tensor', 8, 16, 3, 1, 1, 'int8', np.full(16, 5, np.int8))
asym('asym_uint8_stride2', 6, 24, 3, 2, 1, 'uint8', np.full(24, 140, np.uint8), 'int8')
asym('asym_uint8_pointwise', 16, 32, 1, 1, 1, 'uint8', np.full(32, 113, np.uint8))
asym('asym_uint8_pointwise_bias', 16, 32, 1, 1, 1, 'uint8', np.full(32, 113, np.uint8), run=False,
     bias=True)
asym('asym_uint8_centred_depthwise', 16, 16, 3, 1, 16, 'uint8', np.full(16, 128, np.uint8))
asym('asym_int8_per_channel', 6, 24, 3, 2, 1, 'int8', rng.integers(-20, 21, 24), run=False)
asym('asym_uint8_per_channel', 16, 32, 1, 1, 1, 'uint8', rng.integers(100, 157, 32), run=False)
asym('asym_int8_grouped', 16, 32, 3, 1, 2, 'int8', rng.integers(-20, 21, 32), run=False)
asym('asym_int8_depthwise', 16, 16, 3, 2, 16, 'int8', rng.integers(-20, 21, 16), 'int8', run=False)
ha = rng.standard_normal((2, 5, 20)).astype(np.float32)
nodes = [
    helper.make_node('QuantizeLinear', ['h', 'hs', 'hz'], ['hq']),
    helper.make_node('DequantizeLinear', ['hq', 'hs', 'hz'], ['hd']),
    helper.make_node('DequantizeLinear', ['wm', 'wms', 'wmz'], ['wmd']),
    helper.make_node('MatMul', ['hd', 'wmd'], ['m']),
    helper.make_node('QuantizeLinear', ['m', 'ms', 'mz'], ['out'])]
inits = [tensor('hs', np.float32(0.03)), tensor('hz', np.uint8(128)),
         tensor('wm', weights_with_zero_point((20, 12), 'uint8', 140)), tensor('wms', np.float32(0.01)),
         tensor('wmz', np.uint8(140)), tensor('ms', np.float32(0.2)), tensor('mz', np.uint8(120))]
save('asym_uint8_matmul', nodes, [f32('h', ha.shape)], [u8('out', (2, 5, 12))], inits, {'h': ha})

# QOperator: QLinearConv, com.microsoft QLinearAdd / QLinearGlobalAveragePool /
# QLinearSigmoid / QLinearLeakyRelu / QLinearConcat / QLinearMul / QGemm.
xq = rng.integers(0, 256, (1, 8, 6, 6)).astype(np.uint8)
w2 = rng.integers(-W8, W8 + 1, (8, 8, 3, 3)).astype(np.int8)
c = lambda name, v: tensor(name, v)
nodes = [
    helper.make_node('QLinearConv', ['xq', 'sx', 'zx', 'w2', 'sw', 'zw', 'sc', 'zc', 'b2'], ['cq'],
                     pads=[1, 1, 1, 1]),
    helper.make_node('QLinearAdd', ['cq', 'sc', 'zc', 'xq', 'sx', 'zx', 'sa', 'za'], ['aq'],
                     domain='com.microsoft'),
    helper.make_node('QLinearSigmoid', ['aq', 'sa', 'za', 'sg', 'zg'], ['gq'], domain='com.microsoft'),
    helper.make_node('QLinearLeakyRelu', ['aq', 'sa', 'za', 'sl', 'zl'], ['lq'], alpha=0.1,
                     domain='com.microsoft'),
    helper.make_node('QLinearMul', ['gq', 'sg', 'zg', 'lq', 'sl', 'zl', 'sm', 'zm'], ['mq'],
                     domain='com.microsoft'),
    helper.make_node('QLinearConcat', ['st', 'zt', 'mq', 'sm', 'zm', 'aq', 'sa', 'za'], ['tq'],
                     axis=1, domain='com.microsoft'),
    helper.make_node('QLinearGlobalAveragePool', ['tq', 'st', 'zt', 'sp', 'zp'], ['pq'],
                     domain='com.microsoft'),
    helper.make_node('Flatten', ['pq'], ['fq']),
    helper.make_node('QGemm', ['fq', 'sp', 'zp', 'wg', 'swg', 'zwg', 'bg', 'so', 'zo'], ['oq'],
                     transB=1, domain='com.microsoft'),
]
inits = [c('sx', np.float32(0.03)), c('zx', np.uint8(128)), c('w2', w2),
         c('sw', np.float32(0.004)), c('zw', np.int8(0)), c('sc', np.float32(0.25)),
         c('zc', np.uint8(120)), c('b2', rng.integers(-500, 500, 8).astype(np.int32)),
         c('sa', np.float32(0.2)), c('za', np.uint8(110)), c('sg', np.float32(1 / 256)),
         c('zg', np.uint8(0)), c('sl', np.float32(0.1)), c('zl', np.uint8(30)),
         c('sm', np.float32(0.05)), c('zm', np.uint8(20)), c('st', np.float32(0.15)),
         c('zt', np.uint8(90)), c('sp', np.float32(0.08)), c('zp', np.uint8(100)),
         c('wg', rng.integers(-W8, W8 + 1, (10, 16)).astype(np.int8)), c('swg', np.float32(0.01)),
         c('zwg', np.int8(0)), c('bg', rng.integers(-200, 200, 10).astype(np.int32)),
         c('so', np.float32(0.02)), c('zo', np.uint8(128))]
save('qoperator', nodes, [u8('xq', xq.shape)], [u8('oq', (1, 10))], inits, {'xq': xq},
     opsets=(('', 13), ('com.microsoft', 1)), check=False)

# Dynamic quantization: DynamicQuantizeLinear, MatMulInteger, com.microsoft
# DynamicQuantizeMatMul and MatMulIntegerToFloat.
a = rng.standard_normal((3, 12)).astype(np.float32)
bw = rng.integers(-W8, W8 + 1, (12, 5)).astype(np.int8)
nodes = [
    helper.make_node('DynamicQuantizeLinear', ['a'], ['aq', 'as', 'az']),
    helper.make_node('DynamicQuantizeMatMul', ['a', 'bw', 'bs', 'bz', 'bias'], ['y1'],
                     domain='com.microsoft'),
    helper.make_node('MatMulIntegerToFloat', ['aq', 'bw', 'as', 'bs', 'az', 'bz', 'bias'], ['y2'],
                     domain='com.microsoft'),
]
inits = [c('bw', bw), c('bs', (rng.random(5) * 0.02 + 0.01).astype(np.float32)),
         c('bz', np.zeros(5, np.int8)), c('bias', rng.standard_normal(5).astype(np.float32))]
save('dynamic', nodes, [f32('a', a.shape)], [u8('aq', a.shape), f32('y1', (3, 5)), f32('y2', (3, 5))],
     inits, {'a': a}, opsets=(('', 13), ('com.microsoft', 1)), check=False)

# QDQ MatMul over 3-D activations (a transformer's projection): dequantize -> MatMul by an int8
# weight -> quantize.
h = rng.standard_normal((2, 6, 32)).astype(np.float32)
wm = rng.integers(-W8, W8 + 1, (32, 24)).astype(np.int8)
nodes = [
    helper.make_node('QuantizeLinear', ['h', 'hs', 'hz'], ['hq']),
    helper.make_node('DequantizeLinear', ['hq', 'hs', 'hz'], ['hd']),
    helper.make_node('DequantizeLinear', ['wm', 'wms', 'wmz'], ['wmd']),
    helper.make_node('MatMul', ['hd', 'wmd'], ['m']),
    helper.make_node('QuantizeLinear', ['m', 'ms', 'mz'], ['mq']),
    helper.make_node('DequantizeLinear', ['mq', 'ms', 'mz'], ['out']),
]
inits = [c('hs', np.float32(0.03)), c('hz', np.uint8(128)), c('wm', wm),
         c('wms', np.float32(0.01)), c('wmz', np.int8(0)), c('ms', np.float32(0.2)),
         c('mz', np.uint8(120))]
save('qdq_matmul', nodes, [f32('h', h.shape)], [f32('out', (2, 6, 24))], inits, {'h': h})
# The same over a ViT's 197 tokens: the rows are padded to 200 for the kernel's tile of 8 and
# sliced off again.
h = rng.standard_normal((1, 197, 32)).astype(np.float32)
save('qdq_tokens', nodes, [f32('h', h.shape)], [f32('out', (1, 197, 24))], inits, {'h': h})
# And 19 rows of 30 channels: rows padded to 24 and channels to 32, in one pad.
h = rng.standard_normal((1, 19, 30)).astype(np.float32)
inits = [i for i in inits if i.name != 'wm'] + [c('wm', wm[:30])]
save('qdq_tokens_odd', nodes, [f32('h', h.shape)], [f32('out', (1, 19, 24))], inits, {'h': h})

# Every pair of 8-bit values through a QDQ Mul (dequantize both, multiply, quantize: ONNX
# Runtime fuses it into its QLinearMul) and through com.microsoft QLinearMul, for several
# scale sets, uint8 and int8.
nodes, inits, outs = [], [], []
for k, (t, sa, za, sb, zb, sy, zy) in enumerate([
        (np.uint8, 0.05, 128, 0.03, 100, 0.07, 90),
        (np.uint8, 0.0462, 135, 1 / 256, 0, 0.0335, 7),
        (np.uint8, 0.5, 0, 0.001, 255, 0.002, 255),
        (np.int8, 0.02, -3, 0.04, 10, 0.01, -20)]):
    p = 'm%d_' % k
    src = ('a', 'b') if t == np.uint8 else ('ai', 'bi')
    inits += [c(p + 'sa', np.float32(sa)), c(p + 'za', t(za)), c(p + 'sb', np.float32(sb)),
              c(p + 'zb', t(zb)), c(p + 'sy', np.float32(sy)), c(p + 'zy', t(zy))]
    nodes += [helper.make_node('DequantizeLinear', [src[0], p + 'sa', p + 'za'], [p + 'ad']),
              helper.make_node('DequantizeLinear', [src[1], p + 'sb', p + 'zb'], [p + 'bd']),
              helper.make_node('Mul', [p + 'ad', p + 'bd'], [p + 'm']),
              helper.make_node('QuantizeLinear', [p + 'm', p + 'sy', p + 'zy'], [p + 'qdq']),
              helper.make_node('QLinearMul', [src[0], p + 'sa', p + 'za', src[1], p + 'sb',
                                              p + 'zb', p + 'sy', p + 'zy'], [p + 'qop'],
                               domain='com.microsoft')]
    elem = TensorProto.UINT8 if t == np.uint8 else TensorProto.INT8
    outs += [helper.make_tensor_value_info(p + n, elem, [256, 256]) for n in ('qdq', 'qop')]
all_u8 = np.arange(256, dtype=np.uint8)
all_i8 = (np.arange(256) - 128).astype(np.int8)
i8 = lambda n, s: helper.make_tensor_value_info(n, TensorProto.INT8, list(s))
save('qmul_all_pairs', nodes, [u8('a', (256, 1)), u8('b', (1, 256)), i8('ai', (256, 1)),
                               i8('bi', (1, 256))], outs, inits,
     {'a': all_u8.reshape(256, 1), 'b': all_u8.reshape(1, 256),
      'ai': all_i8.reshape(256, 1), 'bi': all_i8.reshape(1, 256)},
     opsets=(('', 13), ('com.microsoft', 1)), check=False)

# QDQ GlobalAveragePool (ONNX Runtime fuses it into QLinearGlobalAveragePool) over several
# image sizes and scale sets, uint8 and int8, full-range random inputs.
nodes, inits, outs, feeds, ins = [], [], [], {}, []
for k, (t, hw, sx, zx, sy, zy) in enumerate([
        (np.uint8, (7, 7), 0.05, 128, 0.01, 120), (np.uint8, (14, 14), 0.02, 3, 0.03, 0),
        (np.uint8, (1, 1), 0.1, 250, 0.07, 9), (np.uint8, (13, 17), 0.0123, 77, 0.0045, 200),
        (np.int8, (7, 7), 0.04, -5, 0.02, 10)]):
    p = 'g%d_' % k
    lo, hi = (0, 256) if t == np.uint8 else (-128, 128)
    feeds[p + 'x'] = rng.integers(lo, hi, (4, 128) + hw).astype(t)
    elem = TensorProto.UINT8 if t == np.uint8 else TensorProto.INT8
    ins.append(helper.make_tensor_value_info(p + 'x', elem, [4, 128, *hw]))
    inits += [c(p + 'sx', np.float32(sx)), c(p + 'zx', t(zx)), c(p + 'sy', np.float32(sy)),
              c(p + 'zy', t(zy))]
    nodes += [helper.make_node('DequantizeLinear', [p + 'x', p + 'sx', p + 'zx'], [p + 'xd']),
              helper.make_node('GlobalAveragePool', [p + 'xd'], [p + 'm']),
              helper.make_node('QuantizeLinear', [p + 'm', p + 'sy', p + 'zy'], [p + 'y'])]
    outs.append(helper.make_tensor_value_info(p + 'y', elem, [4, 128, 1, 1]))
save('qgap', nodes, ins, outs, inits, feeds)

# Malformed quantization, each a one-node model.
def bad(name, node, inits, x_type=TensorProto.FLOAT, shape=(2, 3)):
    save(name, [node], [helper.make_tensor_value_info('x', x_type, list(shape))],
         [helper.make_tensor_value_info('y', TensorProto.UNDEFINED, None)], inits,
         {'x': np.zeros(shape, np.float32 if x_type == TensorProto.FLOAT else np.uint8)},
         check=False, run=False)
bad('zero_scale', helper.make_node('QuantizeLinear', ['x', 's', 'z'], ['y'], name='q_zero'),
    [c('s', np.float32(0)), c('z', np.uint8(0))])
bad('int32_zero_point', helper.make_node('DequantizeLinear', ['x', 's', 'z'], ['y'], name='dq_bias'),
    [c('s', np.float32(0.1)), c('z', np.int32(5))], TensorProto.INT32)
bad('axis_length', helper.make_node('DequantizeLinear', ['x', 's', 'z'], ['y'], name='dq_axis', axis=1),
    [c('s', np.ones(4, np.float32)), c('z', np.zeros(4, np.uint8))], TensorProto.UINT8)
bad('mismatched_types', helper.make_node('DequantizeLinear', ['x', 's', 'z'], ['y'], name='dq_types'),
    [c('s', np.float32(0.1)), c('z', np.int8(0))], TensorProto.UINT8)
bad('output_dtype', helper.make_node('QuantizeLinear', ['x', 's', 'z'], ['y'], name='q_dtype',
                                     output_dtype=TensorProto.INT8),
    [c('s', np.float32(0.1)), c('z', np.uint8(0))])
)");
  }
};

TEST_F(CliQuantized, QdqBlockMatchesOnnxRuntimeExactly) {
  // Integer convolutions, requantization and the residual add as ONNX Runtime computes them.
  expect_run_matches_oracle("qdq_block", 0, 0);
}

TEST_F(CliQuantized, QdqBlockCompilesToIntegerKernels) {
  CommandResult r = run_anvil({"compile", path("qdq_block.onnx"), "-o", path("qdq.tar"),
                               "--dump-after", "FakeQuantizationToInteger"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("qnn.conv2d("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("qnn.add("), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("= nn.conv2d("), std::string::npos) << r.err;
}

TEST_F(CliQuantized, Int8ActivationsRunTheBlockedKernelsAndMatchOnnxRuntimeExactly) {
  expect_run_matches_oracle("qdq_signed", 0, 0);
  CommandResult r = run_anvil({"run", path("qdq_signed.onnx"), "--inputs",
                               path("qdq_signed.in.npz"), "--profile", "--repeat", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("x86.conv2d_int8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("x86.depthwise_int8"), std::string::npos) << r.out;
}

TEST_F(CliQuantized, GroupedConvolutionsMatchOnnxRuntimeExactly) {
  for (const char* model : {"grouped2", "grouped4", "grouped8", "grouped16"}) {
    expect_run_matches_oracle(model, 0, 0);
    CommandResult r =
        run_anvil({"run", path(std::string(model) + ".onnx"), "--inputs",
                   path(std::string(model) + ".in.npz"), "--profile", "--repeat", "1"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Groups of 16, 8 and 4 output channels take the blocked kernel; 2 input channels a group
    // cannot.
    EXPECT_EQ(r.out.find("qnn_contrib_conv2d_NCHWc") != std::string::npos,
              std::string(model) != "grouped16")
        << model << "\n"
        << r.out;
  }
}

TEST_F(CliQuantized, WeightsWithZeroPointsRunTheBlockedKernel) {
  // Compiled against the reference interpreter, and against ONNX Runtime exactly where it runs
  // the model (one zero point for all channels).
  const char* models[] = {"asym_int8_tensor",
                          "asym_uint8_stride2",
                          "asym_uint8_pointwise",
                          "asym_uint8_pointwise_bias",
                          "asym_uint8_centred_depthwise",
                          "asym_int8_per_channel",
                          "asym_uint8_per_channel",
                          "asym_int8_grouped",
                          "asym_int8_depthwise",
                          "asym_uint8_matmul"};
  for (const std::string model : models) {
    SCOPED_TRACE(model);
    if (std::filesystem::exists(path(model + ".ort.npz"))) expect_run_matches_oracle(model, 0, 0);
    const std::string compiled = path(model + ".anvil.npz"), reference = path(model + ".ref.npz");
    CommandResult r = run_anvil({"run", path(model + ".onnx"), "--inputs", path(model + ".in.npz"),
                                 "--outputs", compiled, "--profile", "--repeat", "1"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("qnn_contrib_"), std::string::npos) << r.out;
    r = run_anvil({"run", path(model + ".onnx"), "--inputs", path(model + ".in.npz"), "--outputs",
                   reference, "--executor", "reference"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The interpreter runs the model as written, in float: the integer products are exact
    // there, but a float bias rounds on its own, a step at most on a halfway value.
    const double steps = model.ends_with("_bias") ? 1 : 0;
    const Tensor got = read_npz(compiled)[0].second, want = read_npz(reference)[0].second;
    ASSERT_EQ(got.shape_vector(), want.shape_vector());
    for (int64_t i = 0; i < want.numel(); ++i)
      ASSERT_LE(std::fabs(got.get_as_double(i) - want.get_as_double(i)), steps) << "element " << i;
  }
}

TEST_F(CliQuantized, QdqMatMulOverThreeDimensionsRunsTheInt8Kernel) {
  expect_run_matches_oracle("qdq_tokens", 0, 0);
  expect_run_matches_oracle("qdq_tokens_odd", 0, 0);
  expect_run_matches_oracle("qdq_matmul", 0, 0);
  CommandResult r = run_anvil({"run", path("qdq_matmul.onnx"), "--inputs",
                               path("qdq_matmul.in.npz"), "--profile", "--repeat", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("x86.conv2d_int8"), std::string::npos) << r.out;
}

TEST_F(CliQuantized, QOperatorModelMatchesOnnxRuntime) {
  // ONNX Runtime's sigmoid, leaky relu, mul and average pool round through its own float
  // paths (table lookups, fixed point); one step of difference is allowed there.
  expect_run_matches_oracle("qoperator", 1, 0);
}

TEST_F(CliQuantized, QuantizedMultiplyOfEveryPairMatchesOnnxRuntimeExactly) {
  // qnn.mul rounds its product as ONNX Runtime's QLinearMul does (the integer product scaled
  // by one float ratio, then the zero point added): dequantize-multiply-quantize by the
  // letter of the spec would be a step off on some pairs.
  expect_run_matches_oracle("qmul_all_pairs", 0, 0);
  CommandResult r = run_anvil({"compile", path("qmul_all_pairs.onnx"), "-o", path("qmul.tar"),
                               "--dump-after", "FakeQuantizationToInteger"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("= multiply("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("qnn.mul("), std::string::npos) << r.err;
}

TEST_F(CliQuantized, QuantizedGlobalAveragePoolMatchesOnnxRuntimeExactly) {
  // An integer sum requantized once, as QLinearGlobalAveragePool: the float average of the
  // spec rounds apart from it on some channels.
  expect_run_matches_oracle("qgap", 0, 0);
  CommandResult r = run_anvil({"compile", path("qgap.onnx"), "-o", path("qgap.tar"), "--dump-after",
                               "FakeQuantizationToInteger"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("nn.global_avg_pool2d("), std::string::npos) << r.err;
}

TEST_F(CliQuantized, DynamicQuantizationMatchesOnnxRuntime) {
  expect_run_matches_oracle("dynamic", 0, 1e-5);
  // Activations quantized at run time still take the int8 kernel: their zero point is
  // subtracted as zero point x the weight's column sums after it.
  CommandResult r = run_anvil({"run", path("dynamic.onnx"), "--inputs", path("dynamic.in.npz"),
                               "--profile", "--repeat", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("x86.conv2d_int8"), std::string::npos) << r.out;
}

TEST_F(CliQuantized, MalformedQuantizationIsOneLineNamingTheNode) {
  struct Case {
    const char* model;
    std::vector<std::string> words;
  } cases[] = {
      {"zero_scale", {"q_zero", "QuantizeLinear", "y_scale must be positive and finite, got 0"}},
      {"int32_zero_point", {"dq_bias", "x_zero_point must be 0 for int32 data, got 5"}},
      {"axis_length", {"dq_axis", "has 4 elements but axis 1"}},
      {"mismatched_types", {"dq_types", "x_zero_point must be uint8"}},
      {"output_dtype", {"q_dtype", "output_dtype", "y_zero_point"}},
  };
  for (const Case& c : cases) {
    CommandResult r = run_anvil({"compile", path(std::string(c.model) + ".onnx"), "-o",
                                 path(std::string(c.model) + ".tar")});
    expect_one_line_error(r, 1, c.words, c.model);
  }
}

}  // namespace
}  // namespace anvil::testing
