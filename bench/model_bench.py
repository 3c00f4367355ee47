"""anvil against ONNX Runtime on whole models, side by side, same threads.

    .venv/bin/python bench/model_bench.py [--build-dir build] [--threads 2] [--repeat 20]
                                          [--models resnet50 mobilenet_v2] [--opt-level 3]

For each model (torchvision, random weights with seed 0, exported once to ONNX into
<build-dir>/bench-cache by tests/models/export_models.py's exporter) it prints:
  - ONNX Runtime's median latency (intra-op threads = --threads, all graph optimizations),
  - anvil's compile time (`anvil compile -O N`, wall clock, one process),
  - anvil's median latency (`anvil run PACKAGE --print-time --repeat R`, ANVIL_NUM_THREADS),
  - the ratio anvil / ONNX Runtime and the largest difference between the two outputs.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "models"))
import export_models  # noqa: E402


def ort_latency(onnx_path, feeds, threads, repeat):
    import numpy as np
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
    for _ in range(3):
        outputs = session.run(None, feeds)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        session.run(None, feeds)
        times.append((time.perf_counter() - start) * 1000)
    return float(np.median(times)), outputs


def anvil_compile(anvil, onnx_path, package, opt_level):
    start = time.perf_counter()
    subprocess.run([anvil, "compile", str(onnx_path), "-O", str(opt_level), "-o", str(package)],
                   check=True)
    return time.perf_counter() - start


def anvil_latency(anvil, package, inputs, outputs, threads, repeat):
    env = dict(os.environ, ANVIL_NUM_THREADS=str(threads))
    result = subprocess.run(
        [anvil, "run", str(package), "--inputs", str(inputs), "--outputs", str(outputs),
         "--print-time", "--repeat", str(repeat)],
        check=True, capture_output=True, text=True, env=env)
    lines = result.stdout.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("mean (ms)"):
            mean, median, *_ = (float(v) for v in lines[i + 1].split())
            return median
    raise SystemExit(f"model_bench: no timing in anvil run's output:\n{result.stdout}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=str(ROOT / "build"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--opt-level", type=int, default=3)
    parser.add_argument("--models", nargs="*", default=["resnet50", "mobilenet_v2"])
    args = parser.parse_args()

    import numpy as np

    build = Path(args.build_dir)
    anvil = str(build / "anvil")
    cache = build / "bench-cache"
    cache.mkdir(parents=True, exist_ok=True)
    stamp = export_models.stamp_text()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name in args.models:
            export_models.export_one(name, cache, stamp)
            onnx_path = cache / f"{name}.onnx"
            inputs = cache / f"{name}.input.npz"
            feeds = dict(np.load(inputs))
            ort_ms, ort_out = ort_latency(onnx_path, feeds, args.threads, args.repeat)
            package = tmp / f"{name}.tar"
            compile_s = anvil_compile(anvil, onnx_path, package, args.opt_level)
            out_npz = tmp / f"{name}.out.npz"
            anvil_ms = anvil_latency(anvil, package, inputs, out_npz, args.threads, args.repeat)
            ours = np.load(out_npz)["output_0"]
            diff = float(np.abs(ours - ort_out[0]).max() / max(np.abs(ort_out[0]).max(), 1e-30))
            rows.append((name, ort_ms, anvil_ms, compile_s, diff))

    print(f"\nthreads {args.threads}, opt level {args.opt_level}, median of {args.repeat} runs")
    print(f"{'model':<14}{'onnxruntime ms':>16}{'anvil ms':>12}{'anvil/ort':>11}"
          f"{'compile s':>11}{'max rel diff':>14}")
    for name, ort_ms, anvil_ms, compile_s, diff in rows:
        print(f"{name:<14}{ort_ms:>16.2f}{anvil_ms:>12.2f}{anvil_ms / ort_ms:>10.2f}x"
              f"{compile_s:>11.1f}{diff:>14.2e}")


if __name__ == "__main__":
    main()
