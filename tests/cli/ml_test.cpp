// Tree ensembles through the command line: random forests over a grid of depths, tree counts,
// feature and target counts, comparison modes, aggregates and post transforms, with missing
// (NaN) values. TreeEnsembleRegressor's oracle is ONNX Runtime; TreeEnsemble (ai.onnx.ml 5),
// which ONNX Runtime 1.19 does not implement, is checked against the ONNX reference
// evaluator, and its probit against Python's inverse normal distribution.
#include <string>

#include "cli/cli_fixture.h"

namespace anvil::testing {
namespace {

class CliTreeEnsemble : public CliFixture {
 protected:
  static void SetUpTestSuite() {
    make_scratch_dir(R"(
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, TensorProto, numpy_helper
from onnx.reference import ReferenceEvaluator
from statistics import NormalDist
rng = np.random.default_rng(11)
MODES = ['BRANCH_LEQ', 'BRANCH_LT', 'BRANCH_GTE', 'BRANCH_GT', 'BRANCH_EQ', 'BRANCH_NEQ']

def random_forest(trees, depth, features, targets, modes, targets_per_leaf=1, levels=None):
    # Nodes as dicts in depth-first order, per tree; leaves carry (target, weight) pairs.
    forest = []
    for t in range(trees):
        nodes = []
        def grow(level):
            me = len(nodes)
            nodes.append(None)
            if level == depth or (level > 0 and rng.random() < 0.2):
                k = rng.choice(targets, size=min(targets_per_leaf, targets), replace=False)
                nodes[me] = dict(leaf=[(int(i), float(rng.normal())) for i in k])
                return me
            f = int(rng.integers(features))
            split = float(levels[rng.integers(len(levels))]) if levels is not None else float(rng.normal())
            node = dict(feature=f, mode=modes[rng.integers(len(modes))], split=split,
                        missing=int(rng.integers(2)))
            node['true'] = grow(level + 1)
            node['false'] = grow(level + 1)
            nodes[me] = node
            return me
        grow(0)
        forest.append(nodes)
    return forest

def save(name, model, feeds, expected):
    onnx.save(model, os.path.join(out_dir, name + '.onnx'))
    np.savez(os.path.join(out_dir, name + '.in.npz'), **feeds)
    np.savez(os.path.join(out_dir, name + '.ort.npz'), output_0=expected)

def regressor(name, forest, x, targets, aggregate='SUM', post='NONE', base=None):
    a = dict(nodes_treeids=[], nodes_nodeids=[], nodes_featureids=[], nodes_modes=[],
             nodes_values=[], nodes_truenodeids=[], nodes_falsenodeids=[],
             nodes_missing_value_tracks_true=[], target_treeids=[], target_nodeids=[],
             target_ids=[], target_weights=[])
    for t, nodes in enumerate(forest):
        for i, n in enumerate(nodes):
            a['nodes_treeids'].append(t); a['nodes_nodeids'].append(i)
            if 'leaf' in n:
                for f in ['nodes_featureids', 'nodes_truenodeids', 'nodes_falsenodeids',
                          'nodes_missing_value_tracks_true']:
                    a[f].append(0)
                a['nodes_modes'].append('LEAF'); a['nodes_values'].append(0.0)
                for target, w in n['leaf']:
                    a['target_treeids'].append(t); a['target_nodeids'].append(i)
                    a['target_ids'].append(target); a['target_weights'].append(w)
            else:
                a['nodes_featureids'].append(n['feature']); a['nodes_modes'].append(n['mode'])
                a['nodes_values'].append(n['split']); a['nodes_truenodeids'].append(n['true'])
                a['nodes_falsenodeids'].append(n['false'])
                a['nodes_missing_value_tracks_true'].append(n['missing'])
    if base is not None:
        a['base_values'] = base
    node = helper.make_node('TreeEnsembleRegressor', ['x'], ['y'], domain='ai.onnx.ml',
                            n_targets=targets, aggregate_function=aggregate, post_transform=post, **a)
    elem = TensorProto.DOUBLE if x.dtype == np.float64 else TensorProto.FLOAT
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info('x', elem, list(x.shape))],
                              [helper.make_tensor_value_info('y', TensorProto.FLOAT, [x.shape[0], targets])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13),
                                                    helper.make_opsetid('ai.onnx.ml', 3)])
    model.ir_version = 8
    session = ort.InferenceSession(model.SerializeToString(), providers=['CPUExecutionProvider'])
    save(name, model, {'x': x}, session.run(None, {'x': x})[0])

def ensemble_v5(name, forest, x, targets, aggregate=1, post=0, members=None):
    # Split nodes and leaves numbered apart, as TreeEnsemble wants them.
    split_index, leaf_index = {}, {}
    for t, nodes in enumerate(forest):
        for i, n in enumerate(nodes):
            table = leaf_index if 'leaf' in n else split_index
            table[(t, i)] = len(table)
    f, modes, splits, tid, tleaf, fid, fleaf, missing = [], [], [], [], [], [], [], []
    leaf_t, leaf_w, roots, membership = [], [], [], []
    mode_code = {m: k for k, m in enumerate(MODES)}
    for t, nodes in enumerate(forest):
        roots.append(split_index[(t, 0)])
        for i, n in enumerate(nodes):
            if 'leaf' in n:
                leaf_t.append(n['leaf'][0][0]); leaf_w.append(n['leaf'][0][1])
                continue
            f.append(n['feature']); splits.append(n['split']); missing.append(n['missing'])
            if members is not None and rng.random() < 0.5:
                modes.append(6); splits.append(np.nan); splits.pop(-2)
                membership += [float(v) for v in rng.choice(members, size=2, replace=False)] + [np.nan]
            else:
                modes.append(mode_code[n['mode']])
            for key, ids, leafs in (('true', tid, tleaf), ('false', fid, fleaf)):
                child = (t, n[key])
                is_leaf = child in leaf_index
                ids.append(leaf_index[child] if is_leaf else split_index[child]); leafs.append(int(is_leaf))
    dtype = x.dtype
    extra = {}
    if membership:
        extra['membership_values'] = numpy_helper.from_array(np.array(membership, dtype=dtype))
    node = helper.make_node(
        'TreeEnsemble', ['x'], ['y'], domain='ai.onnx.ml', n_targets=targets,
        aggregate_function=aggregate, post_transform=post, tree_roots=roots,
        nodes_featureids=f, nodes_modes=numpy_helper.from_array(np.array(modes, dtype=np.uint8)),
        nodes_splits=numpy_helper.from_array(np.array(splits, dtype=dtype)),
        nodes_truenodeids=tid, nodes_trueleafs=tleaf, nodes_falsenodeids=fid, nodes_falseleafs=fleaf,
        nodes_missing_value_tracks_true=missing, leaf_targetids=leaf_t,
        leaf_weights=numpy_helper.from_array(np.array(leaf_w, dtype=dtype)), **extra)
    elem = TensorProto.DOUBLE if dtype == np.float64 else TensorProto.FLOAT
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info('x', elem, list(x.shape))],
                              [helper.make_tensor_value_info('y', elem, [x.shape[0], targets])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 21),
                                                    helper.make_opsetid('ai.onnx.ml', 5)])
    model.ir_version = 10
    y = ReferenceEvaluator(model).run(None, {'x': x})[0]
    if post == 4:  # the reference leaves post_transform out: probit is the inverse normal cdf
        y = np.vectorize(lambda p: NormalDist().inv_cdf(p))(y).astype(dtype)
    save(name, model, {'x': x}, y)

def features(rows, count, dtype=np.float32, nan=0.0, levels=None):
    x = rng.normal(size=(rows, count)) if levels is None else rng.choice(levels, size=(rows, count))
    x[rng.random(x.shape) < nan] = np.nan
    return x.astype(dtype)

# The grid: (trees, depth, features, targets).
grid = [(1, 1, 1, 1), (1, 4, 3, 1), (3, 3, 5, 2), (10, 5, 8, 3), (25, 6, 16, 4), (4, 8, 4, 1)]
for k, (trees, depth, nf, nt) in enumerate(grid):
    forest = random_forest(trees, depth, nf, nt, MODES[:4], targets_per_leaf=2)
    regressor('reg%d' % k, forest, features(64, nf, nan=0.1), nt,
              base=[float(v) for v in rng.normal(size=nt)])
    forest = random_forest(trees, depth, nf, nt, MODES[:4])
    ensemble_v5('v5_%d' % k, forest, features(64, nf, nan=0.1), nt)
    ensemble_v5('v5_%d_f64' % k, forest, features(64, nf, np.float64, nan=0.1), nt, aggregate=0)

forest = random_forest(8, 4, 6, 3, MODES[:4], targets_per_leaf=3)
for aggregate in ['AVERAGE', 'SUM', 'MIN', 'MAX']:
    for post in ['NONE', 'SOFTMAX', 'LOGISTIC', 'SOFTMAX_ZERO']:
        regressor('agg_%s_%s' % (aggregate, post), forest, features(32, 6, nan=0.05), 3,
                  aggregate, post)
regressor('reg_f64', forest, features(32, 6, np.float64), 3, 'AVERAGE')

# Equality modes and set membership need features that take a few values.
levels = np.array([0.0, 1.0, 2.0, 3.5, -1.0])
forest = random_forest(6, 4, 3, 2, MODES, levels=levels)
regressor('reg_equal', forest, features(64, 3, levels=levels), 2)
ensemble_v5('v5_equal', forest, features(64, 3, levels=levels), 2)
# (The reference ends a set at a member 0.0, as if it were the NaN: the sets leave it out.)
ensemble_v5('v5_member', forest, features(64, 3, levels=levels, nan=0.1), 2, members=levels[1:])

# Probit of a single tree whose weights are probabilities.
forest = random_forest(1, 3, 2, 1, MODES[:4])
for nodes in forest:
    for n in nodes:
        if 'leaf' in n:
            n['leaf'] = [(0, float(rng.uniform(0.05, 0.95)))]
ensemble_v5('v5_probit', forest, features(16, 2), 1, post=4)

# A tree that is one leaf, and a missing child id.
bad = random_forest(2, 2, 2, 1, MODES[:4])
bad[0] = [dict(leaf=[(0, 2.5)])]
regressor('reg_leaf_tree', bad, features(8, 2), 1)
node = helper.make_node('TreeEnsembleRegressor', ['x'], ['y'], domain='ai.onnx.ml', n_targets=1,
                        nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[0, 0, 0],
                        nodes_modes=['BRANCH_LEQ', 'LEAF', 'LEAF'], nodes_values=[0.0, 0.0, 0.0],
                        nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[7, 0, 0],
                        target_treeids=[0], target_nodeids=[1], target_ids=[0], target_weights=[1.0])
graph = helper.make_graph([node], 'bad', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 1])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2, 1])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13), helper.make_opsetid('ai.onnx.ml', 3)])
model.ir_version = 8
onnx.save(model, os.path.join(out_dir, 'reg_bad_child.onnx'))
)");
  }
};

TEST_F(CliTreeEnsemble, RegressorsOverAGridOfForestsMatchOnnxRuntime) {
  for (int k = 0; k < 6; ++k) expect_run_matches_oracle("reg" + std::to_string(k));
  expect_run_matches_oracle("reg_f64");
  expect_run_matches_oracle("reg_leaf_tree");
}

TEST_F(CliTreeEnsemble, EveryAggregateAndPostTransformMatchesOnnxRuntime) {
  for (const char* aggregate : {"AVERAGE", "SUM", "MIN", "MAX"})
    for (const char* post : {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO"})
      expect_run_matches_oracle(std::string("agg_") + aggregate + "_" + post);
}

TEST_F(CliTreeEnsemble, TreeEnsembleOverAGridOfForestsMatchesTheOnnxReference) {
  for (int k = 0; k < 6; ++k) {
    expect_run_matches_oracle("v5_" + std::to_string(k));
    expect_run_matches_oracle("v5_" + std::to_string(k) + "_f64");
  }
  expect_run_matches_oracle("v5_probit");
}

TEST_F(CliTreeEnsemble, EqualityModesAndSetMembershipMatchTheOracles) {
  expect_run_matches_oracle("reg_equal");
  expect_run_matches_oracle("v5_equal");
  expect_run_matches_oracle("v5_member");
}

TEST_F(CliTreeEnsemble, AChildThatIsNotInTheTreeIsNamed) {
  CommandResult r = run_anvil({"run", path("reg_bad_child.onnx")});
  expect_one_line_error(r, 1, {"TreeEnsembleRegressor", "tree 0 has no node 7"});
}

}  // namespace
}  // namespace anvil::testing
