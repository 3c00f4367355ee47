// NonMaxSuppression through the command line over a grid of batches, classes, box counts,
// thresholds, box formats and optional inputs, and inside a small detection head whose later
// ops run on the selected rows; RoiAlign over a grid of modes and boxes; AffineGrid in 2-D and
// 3-D; ONNX Runtime's outputs are the oracle.
#include <string>

#include "cli/cli_fixture.h"

namespace anvil::testing {
namespace {

class CliVision : public CliFixture {
 protected:
  static void SetUpTestSuite() {
    make_scratch_dir(R"(
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(3)
F, I64 = TensorProto.FLOAT, TensorProto.INT64

def random_boxes(batch, count, center, flip):
    """Boxes in clusters, so that many overlap; some with their corners swapped, some empty."""
    centers = rng.uniform(0, 10, (batch, max(1, count // 4), 2))
    pick = rng.integers(0, centers.shape[1], (batch, count))
    c = np.take_along_axis(centers, pick[..., None].repeat(2, -1), 1) + rng.normal(0, 0.4, (batch, count, 2))
    size = rng.uniform(0.5, 4, (batch, count, 2))
    size[:, ::7] = 0  # degenerate boxes never suppress
    if center:
        return np.concatenate([c, size], -1).astype(np.float32)
    lo, hi = c - size / 2, c + size / 2
    boxes = np.concatenate([lo[..., ::-1], hi[..., ::-1]], -1)  # y1, x1, y2, x2
    if flip:
        boxes[:, ::3] = boxes[:, ::3][..., [2, 3, 0, 1]]
    return boxes.astype(np.float32)

def nms(name, batch, classes, count, max_out, iou, score, center=0, flip=False, ties=False,
        as_initializers=False, opset=11):
    boxes = random_boxes(batch, count, center, flip)
    scores = rng.random((batch, classes, count)).astype(np.float32)
    if ties:
        scores = np.round(scores * 4) / 4  # many equal scores: the lower index goes first
    feeds = {'boxes': boxes, 'scores': scores}
    inputs = [helper.make_tensor_value_info('boxes', F, list(boxes.shape)),
              helper.make_tensor_value_info('scores', F, list(scores.shape))]
    inits, names = [], ['boxes', 'scores']
    for key, value in [('max_out', None if max_out is None else np.array([max_out], np.int64)),
                       ('iou', None if iou is None else np.array([iou], np.float32)),
                       ('score', None if score is None else np.array([score], np.float32))]:
        if value is None:
            names.append('')
        elif as_initializers:
            inits.append(numpy_helper.from_array(value, key))
            names.append(key)
        else:
            feeds[key] = value
            elem = I64 if value.dtype == np.int64 else F
            inputs.append(helper.make_tensor_value_info(key, elem, [1]))
            names.append(key)
    while names[-1] == '':
        names.pop()
    node = helper.make_node('NonMaxSuppression', names, ['selected'], center_point_box=center)
    graph = helper.make_graph([node], name, inputs,
                              [helper.make_tensor_value_info('selected', I64, None)], inits)
    save(name, graph, feeds, opset)

def save(name, graph, feeds, opset, specification=False):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)])
    model.ir_version = 8
    path = os.path.join(out_dir, name + '.onnx')
    onnx.save(model, path)
    np.savez(os.path.join(out_dir, name + '.in.npz'), **feeds)
    if specification:  # the ONNX reference implementation, where ONNX Runtime departs from it
        from onnx.reference import ReferenceEvaluator
        results = ReferenceEvaluator(model).run(None, feeds)
    else:
        results = ort.InferenceSession(path, providers=['CPUExecutionProvider']).run(None, feeds)
    np.savez(os.path.join(out_dir, name + '.ort.npz'),
             **{'output_%d' % i: r for i, r in enumerate(results)})

grid = [
    (1, 1, 6, 3, 0.5, 0.0), (1, 1, 6, 10, 0.5, None), (2, 3, 40, 5, 0.3, 0.2),
    (3, 2, 64, 100, 0.5, 0.6), (1, 4, 100, 20, 0.0, None), (2, 1, 17, 1, 0.7, 0.1),
    (1, 2, 30, 0, 0.5, 0.1), (2, 2, 25, 8, 0.99, 0.9), (1, 1, 1, 4, 0.5, None),
]
for k, (batch, classes, count, max_out, iou, score) in enumerate(grid):
    nms('nms%d' % k, batch, classes, count, max_out, iou, score, flip=(k % 2 == 1))
nms('nms_center', 2, 2, 30, 6, 0.4, 0.2, center=1)
nms('nms_ties', 2, 3, 40, 10, 0.5, None, ties=True)
nms('nms_initializers', 2, 2, 30, 5, 0.5, 0.3, as_initializers=True)
nms('nms_defaults', 1, 2, 10, None, None, None)
nms('nms_no_score', 2, 2, 20, 4, 0.5, None, opset=10)

# A detection head: class scores from logits, NMS, then the selected boxes gathered and scaled,
# so compiled kernels run before and after the data-dependent step.
batch, count, classes = 1, 50, 3
logits = rng.normal(0, 2, (batch, classes, count)).astype(np.float32)
boxes = random_boxes(batch, count, 0, False)
nodes = [
    helper.make_node('Sigmoid', ['logits'], ['scores']),
    helper.make_node('NonMaxSuppression', ['boxes', 'scores', 'max_out', 'iou', 'score'],
                     ['selected']),
    helper.make_node('Gather', ['selected', 'two'], ['box_index'], axis=1),
    helper.make_node('Squeeze', ['boxes', 'zero'], ['flat_boxes']),
    helper.make_node('Gather', ['flat_boxes', 'box_index'], ['picked'], axis=0),
    helper.make_node('Mul', ['picked', 'scale'], ['scaled']),
]
inits = [numpy_helper.from_array(np.array([10], np.int64), 'max_out'),
         numpy_helper.from_array(np.array([0.45], np.float32), 'iou'),
         numpy_helper.from_array(np.array([0.3], np.float32), 'score'),
         numpy_helper.from_array(np.array(2, np.int64), 'two'),
         numpy_helper.from_array(np.array([0], np.int64), 'zero'),
         numpy_helper.from_array(np.array([640, 480, 640, 480], np.float32), 'scale')]
graph = helper.make_graph(nodes, 'head',
                          [helper.make_tensor_value_info('boxes', F, [batch, count, 4]),
                           helper.make_tensor_value_info('logits', F, [batch, classes, count])],
                          [helper.make_tensor_value_info('selected', I64, None),
                           helper.make_tensor_value_info('scaled', F, None)], inits)
save('head', graph, {'boxes': boxes, 'logits': logits}, 13)

# RoiAlign over modes, coordinate transforms, sampling ratios, scales and box placements (boxes
# inside, across the border, degenerate), with the output size from attributes.
def roi_align(name, n, c, h, w, count, out_h, out_w, ratio, scale, mode, transform, opset=16,
              dtype=np.float32):
    x = rng.normal(0, 1, (n, c, h, w)).astype(dtype)
    corners = rng.uniform(-2, max(h, w) / scale + 2, (count, 2, 2))
    rois = np.concatenate([corners.min(1), corners.max(1)], -1).astype(dtype)  # x1, y1, x2, y2
    rois[::5, 2:] = rois[::5, :2]  # empty boxes
    indices = rng.integers(0, n, count).astype(np.int64)
    attrs = dict(output_height=out_h, output_width=out_w, sampling_ratio=ratio,
                 spatial_scale=scale, mode=mode)
    if opset >= 16:
        attrs['coordinate_transformation_mode'] = transform
    node = helper.make_node('RoiAlign', ['x', 'rois', 'indices'], ['y'], **attrs)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    graph = helper.make_graph([node], name,
                              [helper.make_tensor_value_info('x', elem, list(x.shape)),
                               helper.make_tensor_value_info('rois', elem, list(rois.shape)),
                               helper.make_tensor_value_info('indices', I64, [count])],
                              [helper.make_tensor_value_info('y', elem, None)])
    save(name, graph, {'x': x, 'rois': rois, 'indices': indices}, opset)

roi_align('roi0', 1, 3, 16, 16, 6, 4, 4, 2, 1.0, 'avg', 'half_pixel')
roi_align('roi1', 2, 4, 20, 12, 9, 3, 5, 0, 0.5, 'avg', 'output_half_pixel')
roi_align('roi2', 2, 2, 10, 10, 7, 5, 5, 0, 1.0, 'max', 'output_half_pixel')
roi_align('roi3', 1, 8, 32, 24, 5, 7, 7, 3, 0.25, 'max', 'half_pixel')
roi_align('roi4', 3, 2, 9, 13, 8, 2, 3, 1, 1.0, 'avg', 'output_half_pixel', opset=10)
roi_align('roi5', 2, 3, 14, 14, 6, 4, 4, 2, 1.0, 'avg', 'half_pixel', dtype=np.float64)

# AffineGrid, 2-D and 3-D, pixel centers or corners, its size given at run time. An axis of one
# point with align_corners sits at -1 in the specification and at +1 in ONNX Runtime 1.19 (0 in
# PyTorch): anvil follows the specification, which is the oracle for those cases.
def affine_grid(name, size, align_corners, dtype=np.float32):
    spatial = len(size) - 2
    theta = rng.normal(0, 1, (size[0], spatial, spatial + 1)).astype(dtype)
    node = helper.make_node('AffineGrid', ['theta', 'size'], ['grid'], align_corners=align_corners)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    graph = helper.make_graph([node], name,
                              [helper.make_tensor_value_info('theta', elem, list(theta.shape)),
                               helper.make_tensor_value_info('size', I64, [len(size)])],
                              [helper.make_tensor_value_info('grid', elem, None)])
    save(name, graph, {'theta': theta, 'size': np.array(size, np.int64)}, 20,
         specification=align_corners == 1 and 1 in size[2:])

affine_grid('grid0', [2, 3, 5, 7], 0)
affine_grid('grid1', [1, 1, 4, 4], 1)
affine_grid('grid2', [3, 2, 1, 6], 1)
affine_grid('grid3', [2, 1, 3, 4, 5], 0)
affine_grid('grid4', [1, 3, 2, 1, 3], 1)

# A score tensor whose box count differs from the boxes'.
node = helper.make_node('NonMaxSuppression', ['boxes', 'scores'], ['selected'])
graph = helper.make_graph([node], 'bad', [helper.make_tensor_value_info('boxes', F, [1, 5, 4]),
                                          helper.make_tensor_value_info('scores', F, [1, 2, 6])],
                          [helper.make_tensor_value_info('selected', I64, None)])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 11)])
model.ir_version = 8
onnx.save(model, os.path.join(out_dir, 'nms_bad.onnx'))
)");
  }
};

TEST_F(CliVision, NonMaxSuppressionOverAGridMatchesOnnxRuntime) {
  for (int k = 0; k < 9; ++k) expect_run_matches_oracle("nms" + std::to_string(k));
}

TEST_F(CliVision, CenterBoxesTiesInitializersAndDefaultsMatchOnnxRuntime) {
  for (const char* name :
       {"nms_center", "nms_ties", "nms_initializers", "nms_defaults", "nms_no_score"})
    expect_run_matches_oracle(name);
}

TEST_F(CliVision, DetectionHeadAroundNonMaxSuppressionMatchesOnnxRuntime) {
  expect_run_matches_oracle("head");
}

TEST_F(CliVision, RoiAlignOverAGridMatchesOnnxRuntime) {
  for (int k = 0; k < 6; ++k) expect_run_matches_oracle("roi" + std::to_string(k));
}

TEST_F(CliVision, AffineGridOverAGridMatchesOnnxRuntime) {
  for (int k = 0; k < 5; ++k) expect_run_matches_oracle("grid" + std::to_string(k));
}

TEST_F(CliVision, MismatchedScoresAreAnErrorNamingTheNode) {
  CommandResult r = run_anvil({"run", path("nms_bad.onnx")});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("NonMaxSuppression"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("scores"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace anvil::testing
