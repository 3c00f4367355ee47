"""Bad input from Python raises AnvilError (a ValueError) naming the culprit; nothing crashes
the interpreter."""

import numpy as np
import pytest

import anvil
from anvil.contrib import graph_executor
from conftest import small_cnn


@pytest.fixture
def module(built_cnn):
    return graph_executor.GraphModule(built_cnn[1]["default"](anvil.cpu()))


def test_wrong_dtype_shape_and_name(module):
    with pytest.raises(anvil.AnvilError, match="input.*float64|float64.*input"):
        module.set_input("input", np.zeros((1, 3, 16, 16), dtype="float64"))
    with pytest.raises(anvil.AnvilError, match=r"input.*\(1, 3, 8, 8\)|\(1, 3, 8, 8\).*input"):
        module.set_input("input", np.zeros((1, 3, 8, 8), dtype="float32"))
    with pytest.raises(anvil.AnvilError, match="nosuch"):
        module.set_input("nosuch", np.zeros((1, 3, 16, 16), dtype="float32"))
    with pytest.raises(anvil.AnvilError, match="nosuch"):
        module.run(nosuch=np.zeros(1, dtype="float32"))
    with pytest.raises(anvil.AnvilError, match="index 7"):
        module.get_output(7)
    with pytest.raises(anvil.AnvilError, match="expected an array.*str"):
        module.set_input("input", "not an array")
    with pytest.raises(anvil.AnvilError, match="str or an int"):
        module.set_input(1.5, np.zeros(1, dtype="float32"))


def test_non_contiguous_array_is_refused(module):
    x = np.zeros((1, 3, 16, 32), dtype="float32")[:, :, :, ::2]
    with pytest.raises(anvil.AnvilError, match="input 'input'.*not C-contiguous"):
        module.set_input("input", x)
    module.set_input("input", np.ascontiguousarray(x))  # the remedy the message names


def test_closed_module(module):
    module.close()
    with pytest.raises(anvil.AnvilError, match="closed"):
        module.run()
    with pytest.raises(anvil.AnvilError, match="closed"):
        module.set_input("input", np.zeros((1, 3, 16, 16), dtype="float32"))
    with pytest.raises(anvil.AnvilError, match="closed"):
        module.get_output(0)


def test_bad_models_and_packages(tmp_path):
    with pytest.raises(anvil.AnvilError, match="missing.onnx"):
        anvil.frontend.from_onnx(str(tmp_path / "missing.onnx"))
    with pytest.raises(anvil.AnvilError):
        anvil.frontend.from_onnx(b"\x08\x07garbage that is not a model")
    truncated = small_cnn().SerializeToString()[:200]
    with pytest.raises(anvil.AnvilError):
        anvil.frontend.from_onnx(truncated)
    with pytest.raises(anvil.AnvilError, match="ModelProto"):
        anvil.frontend.from_onnx(42)
    bad = tmp_path / "bad.tar"
    bad.write_bytes(b"not a package at all")
    with pytest.raises(anvil.AnvilError, match="bad.tar"):
        anvil.runtime.load_module(bad)
    with pytest.raises(anvil.AnvilError, match="nowhere.tar"):
        anvil.runtime.load_module(tmp_path / "nowhere.tar")


def test_unknown_operator_and_bad_target():
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("NoSuchOp", ["x"], ["y"], domain="com.example")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("com.example", 1)])
    with pytest.raises(anvil.AnvilError, match="NoSuchOp"):
        anvil.frontend.from_onnx(model)
    mod, params = anvil.frontend.from_onnx(small_cnn())
    with pytest.raises(anvil.AnvilError, match="cuda9"):
        anvil.build(mod, target="cuda9", params=params)


def test_bad_params_and_shapes():
    mod, params = anvil.frontend.from_onnx(small_cnn())
    with pytest.raises(anvil.AnvilError, match="params"):
        anvil.build(mod, params=[1, 2])
    with pytest.raises(anvil.AnvilError, match="shape of 'input'"):
        anvil.frontend.from_onnx(small_cnn(), shape={"input": "abc"})
    with pytest.raises(anvil.AnvilError, match="only 'main'"):
        anvil.transform.BindParams("other", {})
    with anvil.transform.PassContext(config={"relay.FuseOps.max_depth": "deep"}):
        with pytest.raises(anvil.AnvilError, match="max_depth must be a positive integer, got 'deep'"):
            anvil.build(mod, params=params)


def test_vm_call_with_the_wrong_arity_or_function():
    mod, params = anvil.frontend.from_onnx(small_cnn(batch="N"))
    vm = anvil.vm.VirtualMachine(anvil.vm.build(mod, params=params))
    with pytest.raises(anvil.AnvilError, match="takes 1 inputs, got 2"):
        vm["main"](np.zeros((1, 3, 16, 16), "float32"), np.zeros(1, "float32"))
    with pytest.raises(anvil.AnvilError, match="'other'"):
        vm["other"]
    with pytest.raises(anvil.AnvilError, match="Executable"):
        anvil.vm.VirtualMachine("not an executable")


def test_error_is_one_line_value_error():
    try:
        anvil.runtime.load_module("/nonexistent/x.tar")
    except ValueError as e:
        assert "\n" not in str(e)
    else:
        pytest.fail("no error")
