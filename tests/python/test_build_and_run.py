"""from_onnx, build, GraphModule, export_library / load_module and params blobs, against ONNX
Runtime and numpy."""

import numpy as np
import pytest

import anvil
from anvil.contrib import graph_executor
from conftest import run_onnxruntime, small_cnn, two_outputs


def test_from_onnx_build_run_matches_onnxruntime(built_cnn, rng):
    model, lib = built_cnn
    x = rng.uniform(-1, 1, size=(1, 3, 16, 16)).astype("float32")
    m = graph_executor.GraphModule(lib["default"](anvil.cpu()))
    m.set_input("input", x)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), run_onnxruntime(model, {"input": x})[0],
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("source", ["model", "bytes", "path"])
def test_from_onnx_takes_a_model_bytes_or_a_path(source, tmp_path):
    model = two_outputs()
    if source == "bytes":
        arg = model.SerializeToString()
    elif source == "path":
        arg = tmp_path / "m.onnx"
        arg.write_bytes(model.SerializeToString())
        arg = str(arg)
    else:
        arg = model
    mod, params = anvil.frontend.from_onnx(arg)
    assert "def @main(%x: Tensor[(2, 3), float32]" in mod.astext()
    assert isinstance(params, dict)


def test_shape_fixes_a_dynamic_batch(rng):
    model = small_cnn(batch="N")
    mod, params = anvil.frontend.from_onnx(model, shape={"input": (4, 3, 16, 16)})
    lib = anvil.build(mod, target="llvm", params=params)
    x = rng.uniform(-1, 1, size=(4, 3, 16, 16)).astype("float32")
    m = graph_executor.GraphModule(lib["default"](anvil.cpu()))
    m.run(input=x)
    np.testing.assert_allclose(m.get_output(0).numpy(), run_onnxruntime(model, {"input": x})[0],
                               rtol=1e-4, atol=1e-5)


def test_from_onnx_freeze_params_opset_and_dtype(rng):
    model = small_cnn()
    mod, params = anvil.frontend.from_onnx(model)
    assert sorted(params) == ["b", "fc_b", "fc_w", "w"]
    assert "%fc_w" in mod.astext().split("{")[0]
    frozen, none = anvil.frontend.from_onnx(model, freeze_params=True)
    assert none == {} and "%fc_w" not in frozen.astext().split("{")[0]
    lib = anvil.build(frozen)
    m = graph_executor.GraphModule(lib["default"](anvil.cpu()))
    x = rng.uniform(-1, 1, size=(1, 3, 16, 16)).astype("float32")
    m.run(input=x)
    np.testing.assert_allclose(m.get_output(0).numpy(), run_onnxruntime(model, {"input": x})[0],
                               rtol=1e-4, atol=1e-5)
    # opset overrides the model's: Softmax-11 flattens from the axis, -13 does not.
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Softmax", ["x"], ["y"], axis=1)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])])
    softmax = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = rng.normal(size=(2, 3, 4)).astype("float32")
    results = {}
    for opset in (11, 13):
        lib = anvil.build(anvil.frontend.from_onnx(softmax, opset=opset)[0])
        m = graph_executor.GraphModule(lib["default"](anvil.cpu()))
        m.run(x=x)
        results[opset] = m.get_output(0).numpy()
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(results[13], e / e.sum(axis=1, keepdims=True), rtol=1e-5)
    flat = x.reshape(2, 12)
    f = np.exp(flat - flat.max(axis=1, keepdims=True))
    np.testing.assert_allclose(results[11], (f / f.sum(axis=1, keepdims=True)).reshape(2, 3, 4),
                               rtol=1e-5)
    # dtype: the element type of an input the model leaves open.
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", 0, [3])],
                              [helper.make_tensor_value_info("y", 0, [3])])
    untyped = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    mod, _ = anvil.frontend.from_onnx(untyped, dtype="float64")
    assert "Tensor[(3), float64]" in mod.astext()


def test_get_lib_serves_graph_executor_create(built_cnn, rng):
    model, lib = built_cnn
    m = graph_executor.create(lib.get_graph_json(), lib.get_lib(), anvil.cpu())
    m.load_params(anvil.runtime.save_param_dict(lib.get_params()))
    x = rng.uniform(-1, 1, size=(1, 3, 16, 16)).astype("float32")
    m.run(input=x)
    np.testing.assert_allclose(m.get_output(0).numpy(), run_onnxruntime(model, {"input": x})[0],
                               rtol=1e-4, atol=1e-5)
    assert lib.get_lib().function_names()


def test_set_input_by_name_index_and_keyword_and_outputs(rng):
    mod, params = anvil.frontend.from_onnx(two_outputs())
    lib = anvil.build(mod, params=params)
    m = graph_executor.GraphModule(lib["default"](anvil.cpu()))
    x = rng.uniform(-1, 1, size=(2, 3)).astype("float32")
    for setter in (lambda: m.set_input("x", x), lambda: m.set_input(0, x),
                   lambda: m.set_input(x=x), lambda: m.set_input("x", anvil.nd.array(x))):
        m.set_input("x", np.zeros((2, 3), dtype="float32"))
        setter()
        m.run()
        assert m.get_num_outputs() == 2
        np.testing.assert_allclose(m.get_output(0).numpy(), x * 2, rtol=1e-6)
        np.testing.assert_allclose(m.get_output(1).numpy(), x + 1, rtol=1e-6)
    np.testing.assert_array_equal(m.get_input("x").numpy(), x)
    np.testing.assert_array_equal(m.get_input(0).numpy(), x)
    assert m.get_input_index("x") == 0 and m.get_input_index("nope") == -1
    assert m.get_num_inputs() == 1
    assert m.get_input_info() == ({"x": (2, 3)}, {"x": "float32"})
    out = anvil.nd.empty((2, 3), "float32")
    assert m.get_output(1, out) is out
    np.testing.assert_allclose(out.numpy(), x + 1, rtol=1e-6)


def test_benchmark_and_profile(built_cnn):
    m = graph_executor.GraphModule(built_cnn[1]["default"](anvil.cpu()))
    m.set_input("input", np.zeros((1, 3, 16, 16), dtype="float32"))
    result = m.benchmark(repeat=3, number=2)
    assert len(result.results) == 3
    assert 0 < result.min <= result.median <= result.max
    assert "mean (ms)" in str(result)
    report = m.profile(repeat=2)
    assert report.rows and all(r["mean_ms"] >= 0 for r in report.rows)
    assert abs(sum(r["percent"] for r in report.rows) - 100) < 1e-3
    assert report.rows[0]["func_name"] in report.table()


def test_get_source_formats(built_cnn):
    lib = built_cnn[1]
    assert "def @main" in lib.get_source("relay")
    assert "T.prim_func" in lib.get_source("tir")
    assert "define" in lib.get_source("ll")
    with pytest.raises(anvil.AnvilError, match="pdf"):
        lib.get_source("pdf")


@pytest.mark.parametrize("suffix", [".tar", ".so"])
def test_export_library_and_load_module(built_cnn, tmp_path, suffix, rng):
    model, lib = built_cnn
    path = tmp_path / f"deploy{suffix}"
    lib.export_library(str(path))
    loaded = anvil.runtime.load_module(path)
    assert not loaded.is_vm
    m = graph_executor.GraphModule(loaded["default"](anvil.cpu()))
    x = rng.uniform(-1, 1, size=(1, 3, 16, 16)).astype("float32")
    m.set_input("input", x)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), run_onnxruntime(model, {"input": x})[0],
                               rtol=1e-4, atol=1e-5)
    assert loaded.function_names()


def test_graph_json_params_and_lib_as_three_files(built_cnn, tmp_path, rng):
    model, lib = built_cnn
    lib.export_library(str(tmp_path / "lib.so"))
    (tmp_path / "graph.json").write_text(lib.get_graph_json())
    (tmp_path / "params.bin").write_bytes(anvil.runtime.save_param_dict(lib.get_params()))
    loaded = anvil.runtime.load_module(tmp_path / "lib.so")
    m = graph_executor.create((tmp_path / "graph.json").read_text(), loaded, anvil.cpu())
    m.load_params((tmp_path / "params.bin").read_bytes())
    x = rng.uniform(-1, 1, size=(1, 3, 16, 16)).astype("float32")
    m.run(input=x)
    np.testing.assert_allclose(m.get_output(0).numpy(), run_onnxruntime(model, {"input": x})[0],
                               rtol=1e-4, atol=1e-5)


def test_param_dict_round_trip(rng):
    params = {"a": rng.normal(size=(3, 4)).astype("float32"),
              "b": anvil.nd.array(np.arange(5, dtype="int64"))}
    blob = anvil.runtime.save_param_dict(params)
    assert isinstance(blob, bytes)
    back = anvil.runtime.load_param_dict(blob)
    assert sorted(back) == ["a", "b"]
    np.testing.assert_array_equal(back["a"].numpy(), params["a"])
    np.testing.assert_array_equal(back["b"].numpy(), np.arange(5))


def test_pass_context_defaults_to_opt_level_3_and_disables_passes():
    assert anvil.transform.PassContext().opt_level == 3
    assert anvil.transform.PassContext.current().opt_level == 3
    mod, params = anvil.testing.mlp.get_workload(batch_size=1)
    with anvil.transform.PassContext(opt_level=3) as ctx:
        assert anvil.transform.PassContext.current() is ctx
        default = anvil.build(mod, params=params).get_source("relay")
    with anvil.transform.PassContext(opt_level=0):
        level0 = anvil.build(mod, params=params).get_source("relay")
    # At level 0 nothing folds or fuses beyond one op per kernel: more kernels, visibly.
    assert level0.count("Primitive") > default.count("Primitive")
    with pytest.raises(anvil.AnvilError, match="opt_level"):
        anvil.transform.PassContext(opt_level=7)


def test_pass_context_disabled_pass_and_config_reach_the_build(rng):
    model = small_cnn(channels=16)
    mod, params = anvil.frontend.from_onnx(model)
    assert "contrib_conv2d_NCHWc" in anvil.build(mod, params=params).get_source("relay")
    with anvil.transform.PassContext(disabled_pass=["AlterOpLayout"]):
        lib = anvil.build(mod, params=params)
    assert "contrib_conv2d_NCHWc" not in lib.get_source("relay")
    m = graph_executor.GraphModule(lib["default"](anvil.cpu()))
    x = rng.uniform(-1, 1, size=(1, 3, 16, 16)).astype("float32")
    m.run(input=x)
    np.testing.assert_allclose(m.get_output(0).numpy(), run_onnxruntime(model, {"input": x})[0],
                               rtol=1e-4, atol=1e-5)
    # One op per group: more kernels than fusion's default.
    with anvil.transform.PassContext(config={"relay.FuseOps.max_depth": 1}):
        unfused = anvil.build(mod, params=params).get_source("tir")
    assert unfused.count("@T.prim_func") > lib.get_source("tir").count("@T.prim_func")


def test_workloads_build_and_match_numpy(rng):
    mod, params = anvil.testing.mlp.get_workload(batch_size=2, num_classes=10)
    lib = anvil.build(mod, target="llvm", params=params)
    m = graph_executor.GraphModule(lib["default"](anvil.cpu()))
    x = rng.uniform(-1, 1, size=(2, 784)).astype("float32")
    m.run(data=x)
    names = sorted(params)
    assert len(names) == 4
    p = {k: v.numpy() for k, v in params.items()}
    weights = [k for k in names if p[k].ndim == 2]
    first, second = sorted(weights, key=lambda k: -p[k].shape[1])
    bias = {p[k].shape[0]: p[k] for k in names if p[k].ndim == 1}
    hidden = np.maximum(x @ p[first].T + bias[p[first].shape[0]], 0)
    expected = hidden @ p[second].T + bias[p[second].shape[0]]
    np.testing.assert_allclose(m.get_output(0).numpy(), expected, rtol=1e-4, atol=1e-4)

    mod, params = anvil.testing.resnet.get_workload(num_layers=18, batch_size=1,
                                                    image_shape=(3, 32, 32), num_classes=10)
    assert "nn.conv2d" in mod.astext() and len(params) > 20
    mod, params = anvil.testing.mobilenet.get_workload(batch_size=1, image_shape=(3, 32, 32),
                                                       num_classes=10)
    assert "groups=" in mod.astext()


def test_help_reads_well():
    assert "PassContext" in anvil.build.__doc__ and "AnvilError" in anvil.build.__doc__
    assert issubclass(anvil.AnvilError, ValueError)
    assert anvil.frontend.from_onnx.__doc__.strip()


def _host_has_bf16_unit():
    with open("/proc/cpuinfo") as f:
        return any(line.startswith("flags") and " avx512_bf16" in line for line in f)


def test_pass_context_precision_bf16(rng):
    # A dense layer of 16 inputs runs in bf16 where the host has AVX-512 BF16 (its 5 outputs
    # padded to a block of 16 and sliced); elsewhere the build falls back to fp32.
    model = small_cnn(channels=16)
    mod, params = anvil.frontend.from_onnx(model)
    with anvil.transform.PassContext(config={"anvil.precision": "bf16"}):
        lib = anvil.build(mod, params=params)
    assert ("conv2d_NCHWc_bf16" in lib.get_source("relay")) == _host_has_bf16_unit()
    m = graph_executor.GraphModule(lib["default"](anvil.cpu()))
    x = rng.uniform(-1, 1, size=(1, 3, 16, 16)).astype("float32")
    m.run(input=x)
    want = run_onnxruntime(model, {"input": x})[0]
    got = m.get_output(0).numpy()
    assert np.abs(got - want).max() <= 2e-2 * np.abs(want).max()
    with anvil.transform.PassContext(config={"anvil.precision": "fp16"}):
        with pytest.raises(anvil.AnvilError, match="anvil.precision"):
            anvil.build(mod, params=params)
