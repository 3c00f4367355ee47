"""anvil against ONNX Runtime on whole models, in one run, with the same thread counts.

    .venv/bin/python bench/model_bench.py [--models resnet18 ...] [--threads 1 2] [--repeat 20]
                                          [--opt-level 3] [--build-dir build] [--json FILE]

Models (default: all six) are torchvision's resnet18, resnet50, mobilenet_v2, squeezenet1_1,
efficientnet_b0 and vit_b_16 with random weights (seed 0), exported once to ONNX (opset 13,
input 1x3x224x224) into <build-dir>/bench-cache by tests/models/export_models.py's exporter,
together with a seeded input.

First, for every thread count T, the machine's FP32 peak on T threads is measured once
(`anvil analyze --target llvm --threads T`: chains of FMAs on the widest vectors the CPU has).
Then each model is compiled once (`anvil compile -O N`, wall clock of the whole command; the
package does not depend on the thread count) and its FLOPs are read from
`anvil analyze MODEL.onnx --format json` (total_flops, 2 per multiply-add). For each thread
count, ONNX Runtime and anvil are then timed one right after the other, so that the load of
the machine at that moment weighs on both alike:
  - ONNX Runtime (the pinned PyPI package, in this process): CPU provider, ORT_ENABLE_ALL,
    intra_op_num_threads = T, inter_op_num_threads = 1; 3 warm-up runs, median of --repeat;
  - anvil: `ANVIL_NUM_THREADS=T anvil run PACKAGE --print-time --repeat R` (one warm-up run
    whose outputs are written, then R timed runs); its reported median.

It prints a Markdown table, one row per (model, threads):
  model, threads, anvil ms, onnxruntime ms, ratio (anvil / onnxruntime), anvil GFLOP/s
  (FLOPs / anvil's median), anvil % of the measured peak on those threads, ONNX Runtime's
  % of that peak, the largest absolute difference between the two outputs, compile s;
and last, on its own line, "resnet50 compile time: X s". --json FILE writes every figure.
"""

import argparse
import fcntl
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "models"))
import export_models  # noqa: E402

DEFAULT_MODELS = ["resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1", "efficientnet_b0",
                  "vit_b_16"]
DEFAULT_THREADS = [1, 2]
DEFAULT_REPEAT = 20
ORT_WARMUP = 3


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value}")
    return value


def unique(values):
    return list(dict.fromkeys(values))


def fail(message, code=1):
    print(f"model_bench: {message}", file=sys.stderr)
    raise SystemExit(code)


def run_tool(command, env=None):
    """Runs an anvil command; a failure ends the benchmark with the command and its output."""
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True, env=env)
    if result.returncode != 0:
        tail = (result.stdout + result.stderr).strip().splitlines()[-20:]
        fail(f"`{' '.join(str(c) for c in command)}` exited with {result.returncode}:\n"
             + "\n".join(tail))
    return result.stdout


def analyze_json(anvil, args):
    text = run_tool([anvil, "analyze", *args, "--format", "json"])
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        fail(f"anvil analyze {' '.join(map(str, args))} printed no JSON:\n{text[:2000]}")


def measure_peak_gflops(anvil, threads):
    # The small built-in MLP keeps the cost analysis negligible; only the peak is used.
    report = analyze_json(anvil, ["--workload", "mlp", "--target", "llvm",
                                  "--threads", str(threads)])
    return float(report["peak_gflops"]), report.get("peak_vector_bits")


def model_flops(anvil, onnx_path):
    return int(analyze_json(anvil, [onnx_path])["total_flops"])


def anvil_compile(anvil, onnx_path, package, opt_level):
    start = time.perf_counter()
    run_tool([anvil, "compile", onnx_path, "-O", str(opt_level), "-o", package])
    return time.perf_counter() - start


def anvil_latency(anvil, package, inputs, outputs, threads, repeat):
    env = dict(os.environ, ANVIL_NUM_THREADS=str(threads))
    stdout = run_tool([anvil, "run", package, "--inputs", inputs, "--outputs", outputs,
                       "--print-time", "--repeat", str(repeat)], env=env)
    lines = stdout.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("mean (ms)") and i + 1 < len(lines):
            header = line.split("(ms)")
            values = [float(v) for v in lines[i + 1].split()]
            names = [h.strip() for h in header if h.strip()]
            return values[names.index("median")] if "median" in names else values[1]
    fail(f"no timing in anvil run's output:\n{stdout}")


def ort_session(onnx_path, threads):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])


def ort_latency(onnx_path, feeds, threads, repeat):
    import numpy as np

    session = ort_session(onnx_path, threads)
    for _ in range(ORT_WARMUP):
        outputs = session.run(None, feeds)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        session.run(None, feeds)
        times.append((time.perf_counter() - start) * 1000)
    return float(np.median(times)), outputs


def max_abs_diff(anvil_npz, ort_outputs):
    import numpy as np

    ours = np.load(anvil_npz)
    if len(ours.files) != len(ort_outputs):
        fail(f"anvil wrote {len(ours.files)} outputs, ONNX Runtime returned {len(ort_outputs)}")
    worst = 0.0
    for i, theirs in enumerate(ort_outputs):
        mine = ours[f"output_{i}"]
        if mine.shape != theirs.shape:
            fail(f"output {i}: anvil's shape {mine.shape}, ONNX Runtime's {theirs.shape}")
        worst = max(worst, float(np.abs(mine.astype(np.float64) - theirs).max()))
    return worst


def pinned_ort_version():
    requirements = ROOT / "requirements.txt"
    if requirements.exists():
        for line in requirements.read_text().splitlines():
            match = re.match(r"\s*onnxruntime\s*==\s*([^\s;#]+)", line)
            if match:
                return match.group(1)
    return None


def cpu_name():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def export_models_once(cache, models):
    # Same lock as tests/models/export_models.py: two runs sharing a cache never export the
    # same model at once.
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = export_models.stamp_text()
        for name in models:
            export_models.export_one(name, cache, stamp)


def markdown_table(rows):
    header = ["model", "threads", "anvil ms", "onnxruntime ms", "ratio", "anvil GFLOP/s",
              "anvil % peak", "ORT % peak", "max abs diff", "compile s"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        cells = [r["model"], str(r["threads"]), f"{r['anvil_ms']:.2f}", f"{r['ort_ms']:.2f}",
                 f"{r['ratio']:.2f}x", f"{r['anvil_gflops']:.1f}", f"{r['anvil_pct_peak']:.1f}%",
                 f"{r['ort_pct_peak']:.1f}%", f"{r['max_abs_diff']:.1e}", f"{r['compile_s']:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.strip().splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.strip().splitlines()[1:]))
    parser.add_argument("--build-dir", default=str(ROOT / "build"),
                        help="build tree holding the anvil binary; models are cached in its "
                             "bench-cache/ (default: %(default)s)")
    parser.add_argument("--models", nargs="+", choices=export_models.MODELS,
                        default=DEFAULT_MODELS, metavar="MODEL",
                        help=f"models to measure (default: all of {' '.join(DEFAULT_MODELS)})")
    parser.add_argument("--threads", nargs="+", type=positive_int, default=DEFAULT_THREADS,
                        metavar="T", help="thread counts, each used for both (default: 1 2)")
    parser.add_argument("--repeat", type=positive_int, default=DEFAULT_REPEAT,
                        help="timed runs per measurement; the median is reported "
                             "(default: %(default)s)")
    parser.add_argument("--opt-level", type=int, choices=range(4), default=3,
                        help="anvil compile -O level (default: %(default)s)")
    parser.add_argument("--json", metavar="FILE", help="also write every result to FILE")
    args = parser.parse_args()
    models, thread_counts = unique(args.models), unique(args.threads)

    build = Path(args.build_dir)
    anvil = build / "anvil"
    if not (anvil.is_file() and os.access(anvil, os.X_OK)):
        fail(f"no anvil binary at {anvil} (build it first: make build)", code=2)

    import numpy as np
    import onnxruntime

    pinned = pinned_ort_version()
    if pinned and onnxruntime.__version__ != pinned:
        print(f"model_bench: warning: onnxruntime {onnxruntime.__version__} is installed, "
              f"requirements.txt pins {pinned}", file=sys.stderr)

    cache = build / "bench-cache"
    cache.mkdir(parents=True, exist_ok=True)
    export_models_once(cache, models)

    peaks = {}
    for t in thread_counts:
        peaks[t], vector_bits = measure_peak_gflops(anvil, t)
        print(f"measured FP32 peak, {t} thread(s): {peaks[t]:.1f} GFLOP/s "
              f"({vector_bits}-bit vectors)", flush=True)

    rows, per_model = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name in models:
            onnx_path = cache / f"{name}.onnx"
            inputs = cache / f"{name}.input.npz"
            feeds = dict(np.load(inputs))
            flops = model_flops(anvil, onnx_path)
            package = tmp / f"{name}.tar"
            compile_s = anvil_compile(anvil, onnx_path, package, args.opt_level)
            per_model[name] = {"flops": flops, "compile_s": compile_s}
            print(f"{name}: {flops / 1e9:.3f} GFLOP, compiled in {compile_s:.1f} s", flush=True)
            for t in thread_counts:
                ort_ms, ort_out = ort_latency(onnx_path, feeds, t, args.repeat)
                out_npz = tmp / f"{name}.{t}.out.npz"
                anvil_ms = anvil_latency(anvil, package, inputs, out_npz, t, args.repeat)
                anvil_gflops = flops / (anvil_ms * 1e6)
                ort_gflops = flops / (ort_ms * 1e6)
                row = {
                    "model": name, "threads": t, "anvil_ms": anvil_ms, "ort_ms": ort_ms,
                    "ratio": anvil_ms / ort_ms, "anvil_gflops": anvil_gflops,
                    "ort_gflops": ort_gflops, "peak_gflops": peaks[t],
                    "anvil_pct_peak": 100 * anvil_gflops / peaks[t],
                    "ort_pct_peak": 100 * ort_gflops / peaks[t],
                    "max_abs_diff": max_abs_diff(out_npz, ort_out),
                    "flops": flops, "compile_s": compile_s,
                }
                rows.append(row)
                print(f"  {t} thread(s): anvil {anvil_ms:.2f} ms, onnxruntime {ort_ms:.2f} ms "
                      f"({row['ratio']:.2f}x)", flush=True)

    print(f"\nanvil -O{args.opt_level} against onnxruntime {onnxruntime.__version__}, "
          f"median of {args.repeat} runs, same threads for both; ratio = anvil / onnxruntime; "
          f"% peak against the FP32 peak measured on those threads ("
          + ", ".join(f"{t} thread{'s' if t > 1 else ''}: {peaks[t]:.1f} GFLOP/s"
                      for t in thread_counts) + ")\n")
    print(markdown_table(rows))
    resnet50 = per_model.get("resnet50")
    print()
    if resnet50:
        print(f"resnet50 compile time: {resnet50['compile_s']:.1f} s")
    else:
        print("resnet50 compile time: not measured (resnet50 is not in --models)")

    if args.json:
        result = {
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "cpu": cpu_name(), "cpu_count": os.cpu_count(),
            "anvil": str(anvil), "opt_level": args.opt_level, "repeat": args.repeat,
            "onnxruntime": onnxruntime.__version__, "onnxruntime_pinned": pinned,
            "threads": thread_counts,
            "peak_gflops": {str(t): peaks[t] for t in thread_counts},
            "models": per_model,
            "resnet50_compile_s": resnet50["compile_s"] if resnet50 else None,
            "rows": rows,
        }
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
        print(f"results written to {args.json}")


if __name__ == "__main__":
    main()
