"""anvil.tune, anvil.quantize and tvmc from Python, checked against ONNX Runtime."""

import json

import numpy as np
import onnx
import pytest

import anvil
from anvil.contrib import graph_executor
from anvil.driver import tvmc
from conftest import run_onnxruntime, small_cnn


def test_tune_writes_records_that_build_applies(tmp_path, rng):
    model = small_cnn(channels=16, size=24)
    mod, params = anvil.frontend.from_onnx(model)
    tasks = anvil.tune(mod, params, list_tasks=True)
    assert tasks and any(t["space_size"] > 1 for t in tasks)
    assert all(t["calls"] >= 1 and t["name"] for t in tasks)

    records = tmp_path / "records.json"
    result = anvil.tune(mod, params, tuning_records=records, trials=4, tuner="random", repeat=1,
                        min_repeat_ms=1, timeout_s=30)
    lines = [json.loads(line) for line in records.read_text().splitlines() if line.strip()]
    assert lines, "no record written"
    keys = {t["key"] for t in result}
    assert all(r["task"] in keys for r in lines)
    assert sum(t.get("trials", 0) for t in result) == len(lines)

    lib = anvil.build(mod, params=params, tuning_records=records)
    m = graph_executor.GraphModule(lib["default"](anvil.cpu()))
    x = rng.uniform(-1, 1, size=(1, 3, 24, 24)).astype("float32")
    m.run(input=x)
    np.testing.assert_allclose(m.get_output(0).numpy(), run_onnxruntime(model, {"input": x})[0],
                               rtol=1e-4, atol=1e-5)
    with pytest.raises(anvil.AnvilError, match="llvm"):
        anvil.tune(mod, params, target="c", tuning_records=records)


def test_tune_takes_prior_records_threads_and_layout_as_the_cli_does(tmp_path):
    model = small_cnn(channels=16, size=24)
    mod, params = anvil.frontend.from_onnx(model)
    nchw = {t["key"] for t in anvil.tune(mod, params, list_tasks=True)}
    nhwc = {t["key"] for t in anvil.tune(mod, params, list_tasks=True, desired_layout="NHWC")}
    assert nchw != nhwc, "desired_layout did not reach the build"

    def read(path):
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    options = dict(tuner="random", repeat=1, min_repeat_ms=1, timeout_s=30, threads=1)
    first = tmp_path / "first.json"
    anvil.tune(mod, params, tuning_records=first, trials=2, **options)
    prior = read(first)
    assert prior, "no record written"

    # Another file starts with the prior records of the model's tasks, then the new ones.
    second = tmp_path / "second.json"
    result = anvil.tune(mod, params, tuning_records=second, prior_records=first, trials=2,
                        **options)
    lines = read(second)
    assert lines[:len(prior)] == prior
    # The prior records count as trials of their tasks, and none of their configs is measured
    # again.
    assert sum(t.get("trials", 0) for t in result) == len(lines)
    measured = lambda records: {(r.get("task", r["name"]), json.dumps(r["knobs"], sort_keys=True))
                                for r in records}
    assert len(lines) > len(prior) and not measured(lines[len(prior):]) & measured(prior)

    # The prior file itself is appended to.
    anvil.tune(mod, params, tuning_records=first, prior_records=first, trials=1, **options)
    assert read(first)[:len(prior)] == prior and len(read(first)) > len(prior)

    with pytest.raises(anvil.AnvilError, match="missing.json"):
        anvil.tune(mod, params, tuning_records=second, prior_records=tmp_path / "missing.json")
    with pytest.raises(anvil.AnvilError, match="desired_layout"):
        anvil.tune(mod, params, list_tasks=True, desired_layout="NCWH")


def test_quantize_writes_a_qdq_model_onnxruntime_loads(tmp_path, rng):
    model = small_cnn(channels=16)
    samples = [{"input": rng.uniform(-1, 1, size=(1, 3, 16, 16)).astype("float32")}
               for _ in range(4)]
    out = tmp_path / "int8.onnx"
    result = anvil.quantize(model, samples, output=str(out), report=True)
    assert out.read_bytes() == result["model"]
    quantized = onnx.load(str(out))
    ops = {n.op_type for n in quantized.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    assert result["quantized_nodes"]
    assert result["layers"] and all(np.isfinite(l["sqnr_db"]) for l in result["layers"])
    x = samples[0]["input"]
    expected = run_onnxruntime(model, {"input": x})[0]
    # The QDQ graph as written (ONNX Runtime without graph optimizations, so without its fused
    # int8 kernels: their u8s8 path saturates 16-bit sums on hosts without VNNI) is the oracle.
    ort_int8 = run_onnxruntime(quantized, {"input": x}, optimize=False)[0]
    run_onnxruntime(quantized, {"input": x})  # and the optimized session loads and runs it
    assert np.abs(ort_int8 - expected).max() < 0.1 * np.abs(expected).max() + 0.05
    # anvil runs its own quantized model too.
    qmod, qparams = anvil.frontend.from_onnx(quantized)
    lib = anvil.build(qmod, params=qparams)
    m = graph_executor.GraphModule(lib["default"](anvil.cpu()))
    m.run(input=x)
    assert np.abs(m.get_output(0).numpy() - ort_int8).max() < 0.05 * np.abs(expected).max() + 0.02
    with pytest.raises(anvil.AnvilError, match="entropyish"):
        anvil.quantize(model, samples, method="entropyish")
    with pytest.raises(anvil.AnvilError):
        anvil.quantize(model, [])


def test_tvmc_load_compile_run(tmp_path):
    model = small_cnn()
    path = tmp_path / "cnn.onnx"
    onnx.save(model, str(path))
    tvmc_model = tvmc.load(str(path))
    assert "nn.conv2d" in tvmc_model.summary()
    package = tvmc.compile(tvmc_model, target="llvm", package_path=str(tmp_path / "cnn.tar"))
    x = np.random.default_rng(3).uniform(-1, 1, size=(1, 3, 16, 16)).astype("float32")
    result = tvmc.run(package, inputs={"input": x}, repeat=2)
    np.testing.assert_allclose(result.outputs["output_0"], run_onnxruntime(model, {"input": x})[0],
                               rtol=1e-4, atol=1e-5)
    assert len(result.times) == 2 and "mean (ms)" in str(result)
    with pytest.raises(anvil.AnvilError, match="nosuch"):
        tvmc.run(package, inputs={"nosuch": x})
