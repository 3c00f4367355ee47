"""Shared fixtures of the Python package's tests: small ONNX models written with onnx.helper
(the oracle is ONNX Runtime or numpy, never anvil itself) and the model cache of the model
tests."""

import os
import pathlib

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper


def small_cnn(batch=1, seed=0, channels=8, classes=5, size=16):
    """conv 3x3 -> relu -> global average pool -> flatten -> gemm, input "input" of
    (batch, 3, size, size); batch may be a name (a dynamic dim)."""
    rng = np.random.default_rng(seed)
    w = rng.normal(0, 0.3, size=(channels, 3, 3, 3)).astype("float32")
    b = rng.normal(0, 0.1, size=(channels,)).astype("float32")
    fc_w = rng.normal(0, 0.3, size=(classes, channels)).astype("float32")
    fc_b = rng.normal(0, 0.1, size=(classes,)).astype("float32")
    nodes = [
        helper.make_node("Conv", ["input", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["output"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "small_cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, size, size])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [batch, classes])],
        [numpy_helper.from_array(a, n) for a, n in ((w, "w"), (b, "b"), (fc_w, "fc_w"),
                                                  (fc_b, "fc_b"))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def two_outputs():
    """y = x * 2 and z = x + 1 on a (2, 3) input "x"."""
    nodes = [
        helper.make_node("Mul", ["x", "two"], ["y"]),
        helper.make_node("Add", ["x", "one"], ["z"]),
    ]
    graph = helper.make_graph(
        nodes, "two_outputs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.array(2, "float32"), "two"),
         numpy_helper.from_array(np.array(1, "float32"), "one")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def run_onnxruntime(model, feeds, optimize=True):
    """ONNX Runtime's outputs for feeds; optimize=False runs the graph as written."""
    options = onnxruntime.SessionOptions()
    if not optimize:
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(scope="session")
def model_cache():
    """The model tests' cache of exported torchvision models (ONNX files)."""
    path = pathlib.Path(os.environ.get("ANVIL_MODEL_CACHE", "build/model-cache"))
    if not (path / "squeezenet1_1.onnx").is_file():
        raise RuntimeError(f"no exported models in {path}: run the model_export test first")
    return path


@pytest.fixture(scope="session")
def built_cnn():
    """(model, factory) of small_cnn built at opt level 3."""
    import anvil

    model = small_cnn()
    mod, params = anvil.frontend.from_onnx(model)
    return model, anvil.build(mod, target="llvm", params=params)
