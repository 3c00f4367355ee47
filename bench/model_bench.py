"""anvil against ONNX Runtime and OpenVINO on whole models, in one run, with the same thread counts.

    .venv/bin/python bench/model_bench.py [--models resnet18 ...] [--threads 1 2] [--repeat 20]
                                          [--opt-level 3] [--build-dir build] [--json FILE]

Models (default: all 26), each exported once into <build-dir>/bench-cache together with a
seeded input (MODEL.input.npz, one array per ONNX input, keyed by its name):
  - the six of the model tests: torchvision's resnet18, resnet50, mobilenet_v2, squeezenet1_1,
    efficientnet_b0 and vit_b_16;
  - further network families (export_models.FAMILY_MODELS): mobilenet_v3_large,
    efficientnet_b1, shufflenet_v2_x0_5, regnet_x_400mf, regnet_y_800mf, resnext50_32x4d,
    wide_resnet50_2, densenet169, mnasnet0_5, swin_t, and the segmentation networks
    fcn_resnet50 and deeplabv3_resnet50 (their "out" map as the one output, no aux head);
  all of them with random weights (seed 0, batch-norm statistics from one seeded batch),
  opset 13, input "input" of 1x3x224x224, by tests/models/export_models.py's exporter;
  - int8 models (export_models.INT8_MODELS): resnet18_int8, mobilenet_v2_int8 and
    resnet50_int8, the float models quantized by ONNX Runtime's quantize_static (QDQ,
    per-channel int8 weights, uint8 activations, 8 seeded calibration inputs; 7-bit weights
    on hosts without VNNI, see docs/quantization.md);
  - recurrent networks (export_models.RECURRENT_MODELS): lstm_classifier (2-layer LSTM over
    32 steps), gru_speech (Conv1d features, bidirectional GRU over 100 frames) and
    gru_decoder_step (attention and one GRU step of a seq2seq decoder);
  - bert_ort_optimized (export_models.TRANSFORMER_MODELS): a Hugging Face-style BERT encoder
    as ONNX Runtime's transformer optimizer rewrites it (EmbedLayerNormalization, Attention,
    SkipLayerNormalization, BiasGelu);
  - bert_encoder: bench/dynamic_bench.py's BERT-style encoder (token and position embeddings,
    6 encoder layers of hidden 384, 6 heads, GELU; random weights, seed 0) exported with static
    shapes: inputs ids and mask (int64) of 1x128, the mask's last quarter padding
    (dynamic_bench.make_inputs); exported with this Python's PyTorch, re-exported when
    dynamic_bench.py, this exporter or the torch or numpy version changes (bert_encoder.stamp).
--models picks a subset.

First, for every thread count T, the machine's FP32 peak on T threads is measured once
(`anvil analyze --target llvm --threads T`: chains of FMAs on the widest vectors the CPU has).
Then each model is compiled once (`anvil compile -O N`, wall clock of the whole command; the
package does not depend on the thread count) and its FLOPs are read from
`anvil analyze MODEL.onnx --format json` (total_flops, 2 per multiply-add). For each thread
count, ONNX Runtime, OpenVINO and anvil are then timed one right after the other, so that the
load of the machine at that moment weighs on them alike:
  - ONNX Runtime (the pinned PyPI package, in this process): CPU provider, ORT_ENABLE_ALL,
    intra_op_num_threads = T, inter_op_num_threads = 1; 3 warm-up runs, median of --repeat;
  - OpenVINO (the PyPI package, in this process): CPU plugin, INFERENCE_NUM_THREADS = T,
    PERFORMANCE_HINT = LATENCY, INFERENCE_PRECISION_HINT = f32 (its default on CPUs with
    AVX512-BF16 is bf16, which is not the same computation); 3 warm-up runs, median of
    --repeat. Without the openvino package (a warning says so) its columns read "-" and the
    faster peer is ONNX Runtime;
  - anvil: `ANVIL_NUM_THREADS=T anvil run PACKAGE --inputs MODEL.input.npz --print-time
    --repeat R` (one warm-up run whose outputs are written, then R timed runs); its reported
    median.

It prints a Markdown table, one row per (model, threads):
  model, threads, anvil ms, onnxruntime ms, openvino ms, ratio vs ORT (anvil / onnxruntime),
  ratio vs faster peer (anvil / the smaller of onnxruntime and openvino), anvil GFLOP/s
  (FLOPs / anvil's median), anvil % of the measured peak on those threads, ONNX Runtime's %
  of that peak, the largest absolute difference between anvil's outputs and ONNX Runtime's,
  the same for OpenVINO's outputs, compile s; "-" where a figure is missing.
Under it, for each thread count, the geometric mean of "ratio vs faster peer" over the models
that have one and the worst model (the largest ratio); then the memory plan's worst ratio of
planned activation bytes to the largest live set (from `anvil analyze --format json`, which
plans without compiling), naming any model over 1.2x; then "resnet50 compile time: X s" on its
own line.

A step that fails (an export, anvil analyze, compile or run, anvil's outputs that do not match
ONNX Runtime's in number or shape, ONNX Runtime or OpenVINO raising) does not end the run: the
row keeps the figures that could be measured, and each failure is listed under the table with
its model, thread count and one line of the error (the whole output of a failed anvil command
goes to stderr when it happens). Only a failure to measure the peak, or a missing anvil binary,
ends it. --json FILE writes every figure: the peaks, the onnxruntime and openvino versions,
per model FLOPs, compile time and errors, every row (latencies, ratios, GFLOP/s, % peak, both
differences, errors), the per-thread summaries and the list of failures.
"""

import argparse
import fcntl
import hashlib
import json
import math
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

BERT = "bert_encoder"
BERT_SHAPE = (1, 128)  # batch, sequence
ALL_MODELS = export_models.KNOWN_MODELS + [BERT]
DEFAULT_MODELS = ["resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1", "efficientnet_b0",
                  "vit_b_16"] + export_models.FAMILY_MODELS + [BERT] + list(export_models.INT8_MODELS) \
    + export_models.RECURRENT_MODELS + export_models.TRANSFORMER_MODELS
DEFAULT_THREADS = [1, 2]
DEFAULT_REPEAT = 20
ORT_WARMUP = 3
OPENVINO_WARMUP = 3

# Put before dynamic_bench.py's export script: its bert encoder, exported from static example
# inputs of BERT_SHAPE and without dynamic axes, so that every shape of the ONNX file is fixed.
# (Its torch.manual_seed(0) still comes before the model is built: the weights are the same.)
STATIC_EXPORT_PREFIX = r'''
import torch
_export = torch.onnx.export
def _static_export(model, args, path, dynamic_axes=None, **options):
    shape = (%d, %d)
    args = (torch.randint(0, 1000, shape), torch.ones(shape, dtype=torch.int64))
    _export(model, args, path, **options)
torch.onnx.export = _static_export
''' % BERT_SHAPE


class ToolError(SystemExit):
    """A failed step. model_bench records it and goes on; left uncaught (bench/dynamic_bench.py
    uses the helpers below) it ends the program as fail() does: the message on stderr, status 1.
    `summary` is one line for the table's list of failures."""

    def __init__(self, message, summary=None):
        super().__init__(f"model_bench: {message}")
        self.message = message
        self.summary = summary or message.strip().splitlines()[0]


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


def anvil_binary(build_dir):
    """The anvil command line of a build tree; exits with status 2 when it is not built."""
    anvil = Path(build_dir) / "anvil"
    if not anvil.is_file():
        fail(f"no anvil binary at {anvil} (build it first: make build)", code=2)
    return anvil


def warn(message):
    print(f"model_bench: warning: {message}", file=sys.stderr, flush=True)


def one_line(error):
    """One line for a failure: a ToolError's summary, else the exception's type and first line
    (past OpenVINO's "Exception from src/...:" lines, which only say where it was thrown)."""
    if isinstance(error, ToolError):
        return error.summary
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    lines = [line for line in lines if not re.match(r"Exception from \S+:\d+:$", line)] or lines
    text = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def run_tool(command, env=None):
    """Runs an anvil command; a failure raises ToolError with the command and its output."""
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True, env=env)
    if result.returncode != 0:
        tail = (result.stdout + result.stderr).strip().splitlines()[-20:]
        how = (f"was killed by signal {-result.returncode}" if result.returncode < 0
               else f"exited with {result.returncode}")
        last = next((line.strip() for line in reversed(tail) if line.strip()), "")
        raise ToolError(f"`{' '.join(str(c) for c in command)}` {how}:\n" + "\n".join(tail),
                        summary=f"`anvil {command[1]}` {how}" + (f": {last}" if last else ""))
    return result.stdout


def analyze_json(anvil, args):
    text = run_tool([anvil, "analyze", *args, "--format", "json"])
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise ToolError(f"anvil analyze {' '.join(map(str, args))} printed no JSON:\n{text[:2000]}")


def measure_peak_gflops(anvil, threads):
    # The small built-in MLP keeps the cost analysis negligible; only the peak is used.
    report = analyze_json(anvil, ["--workload", "mlp", "--target", "llvm",
                                  "--threads", str(threads)])
    return float(report["peak_gflops"]), report.get("peak_vector_bits")


def model_analysis(anvil, onnx_path):
    """The model's FLOPs and its memory plan's arena / largest live set (None when the plan
    reports an error, as for models only the VM runs)."""
    report = analyze_json(anvil, [onnx_path])
    plan = report.get("memory_plan") or {}
    live = plan.get("largest_live_set_bytes")
    ratio = plan["activation_bytes"] / live if live and "activation_bytes" in plan else None
    return int(report["total_flops"]), ratio


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
    raise ToolError(f"no timing in anvil run's output:\n{stdout}")


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


def openvino_module():
    """The openvino package, or None when it is not installed."""
    try:
        import openvino
    except ImportError:
        return None
    return openvino


def openvino_latency(ov, onnx_path, feeds, threads, repeat):
    """OpenVINO's median latency in ms and its outputs, in the order of the ONNX outputs."""
    import numpy as np

    compiled = ov.Core().compile_model(str(onnx_path), "CPU",
                                       {"INFERENCE_NUM_THREADS": threads,
                                        "PERFORMANCE_HINT": "LATENCY",
                                        "INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    for _ in range(OPENVINO_WARMUP):
        results = request.infer(feeds)
    outputs = [np.array(results[port]) for port in compiled.outputs]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        request.infer(feeds)
        times.append((time.perf_counter() - start) * 1000)
    return float(np.median(times)), outputs


def outputs_max_abs_diff(ours, theirs, who="anvil"):
    """The largest absolute difference between two lists of outputs, in the same order."""
    import numpy as np

    if len(ours) != len(theirs):
        raise ToolError(f"{who} gave {len(ours)} outputs, ONNX Runtime returned {len(theirs)}")
    worst = 0.0
    for i, (mine, other) in enumerate(zip(ours, theirs)):
        if mine.shape != other.shape:
            raise ToolError(f"output {i}: {who}'s shape {mine.shape}, ONNX Runtime's {other.shape}")
        if mine.size:
            worst = max(worst, float(np.abs(mine.astype(np.float64) - other).max()))
    return worst


def max_abs_diff(anvil_npz, ort_outputs):
    import numpy as np

    ours = np.load(anvil_npz)
    if len(ours.files) != len(ort_outputs):
        raise ToolError(f"anvil wrote {len(ours.files)} outputs, "
                        f"ONNX Runtime returned {len(ort_outputs)}")
    return outputs_max_abs_diff([ours[f"output_{i}"] for i in range(len(ort_outputs))],
                                ort_outputs)


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


def dynamic_bench():
    """bench/dynamic_bench.py, which imports this module in turn: when this one runs as a
    script it is registered under its own name first, so that it is not loaded twice."""
    sys.modules.setdefault("model_bench", sys.modules[__name__])
    if str(ROOT / "bench") not in sys.path:
        sys.path.insert(0, str(ROOT / "bench"))
    import dynamic_bench as module

    return module


def bert_stamp_text():
    import numpy
    import torch

    exporter = (Path(__file__).read_text() + (ROOT / "bench" / "dynamic_bench.py").read_text())
    return json.dumps({"exporter_sha256": hashlib.sha256(exporter.encode()).hexdigest(),
                       "torch": torch.__version__, "numpy": numpy.__version__}, sort_keys=True)


def export_bert(cache):
    """Writes bert_encoder.onnx and bert_encoder.input.npz into the cache (see the docstring)."""
    import onnx

    bench = dynamic_bench()
    stamp = bert_stamp_text()
    if export_models.cached(BERT, cache, stamp):
        return
    start = time.monotonic()
    onnx_path = cache / f"{BERT}.onnx"

    def export(tmp):
        result = subprocess.run([sys.executable, "-c",
                                 STATIC_EXPORT_PREFIX + bench.EXPORT_SCRIPT, "bert", tmp],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise ToolError(f"exporting {BERT} failed:\n{result.stderr[-2000:]}")

    export_models.write_atomically(onnx_path, export)
    graph = onnx.load(str(onnx_path), load_external_data=False).graph
    shapes = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in graph.input}
    if sorted(shapes) != ["ids", "mask"] or any(s != list(BERT_SHAPE) for s in shapes.values()):
        raise ToolError(f"{BERT} has inputs {shapes}, expected ids and mask of {list(BERT_SHAPE)}")
    feeds = bench.make_inputs({name: list(BERT_SHAPE) for name in ("ids", "mask")}, seed=0)
    export_models.save_npz(cache / f"{BERT}.input.npz", feeds)
    export_models.finish(BERT, cache, stamp, "exported", start)


def export_models_once(cache, models):
    """Exports what is not cached yet; returns {model: one line} for the exports that failed."""
    # Same lock as tests/models/export_models.py: two runs sharing a cache never export the
    # same model at once.
    failed = {}
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = export_models.stamp_text()
        for name in models:
            try:
                if name == BERT:
                    export_bert(cache)
                else:
                    export_models.export_one(name, cache, stamp)
            except (Exception, SystemExit) as error:  # export_models reports with SystemExit
                failed[name] = f"export: {one_line(error)}"
                print(f"{name}: {failed[name]}", file=sys.stderr, flush=True)
    return failed


def fmt(value, spec, suffix=""):
    return "-" if value is None else f"{value:{spec}}{suffix}"


def markdown_table(rows):
    header = ["model", "threads", "anvil ms", "onnxruntime ms", "openvino ms", "ratio vs ORT",
              "ratio vs faster peer", "anvil GFLOP/s", "anvil % peak", "ORT % peak",
              "max abs diff", "OpenVINO max abs diff", "compile s"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        cells = [r["model"], str(r["threads"]), fmt(r["anvil_ms"], ".2f"), fmt(r["ort_ms"], ".2f"),
                 fmt(r["openvino_ms"], ".2f"), fmt(r["ratio"], ".2f", "x"),
                 fmt(r["ratio_vs_peer"], ".2f", "x"), fmt(r["anvil_gflops"], ".1f"),
                 fmt(r["anvil_pct_peak"], ".1f", "%"), fmt(r["ort_pct_peak"], ".1f", "%"),
                 fmt(r["max_abs_diff"], ".1e"), fmt(r["openvino_max_abs_diff"], ".1e"),
                 fmt(r["compile_s"], ".1f")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def peer_summaries(rows, thread_counts):
    """Per thread count: the geometric mean of anvil / faster peer and the worst model."""
    summaries = {}
    for t in thread_counts:
        measured = [r for r in rows if r["threads"] == t and r["ratio_vs_peer"] is not None]
        worst = max(measured, key=lambda r: r["ratio_vs_peer"], default=None)
        summaries[str(t)] = {
            "models": len(measured),
            "models_missing": sorted(r["model"] for r in rows
                                     if r["threads"] == t and r["ratio_vs_peer"] is None),
            "geomean_ratio_vs_peer": (math.exp(sum(math.log(r["ratio_vs_peer"]) for r in measured)
                                               / len(measured)) if measured else None),
            "worst_model": worst["model"] if worst else None,
            "worst_ratio_vs_peer": worst["ratio_vs_peer"] if worst else None,
            "worst_peer": worst["peer"] if worst else None,
        }
    return summaries


def measure_row(name, t, onnx_path, feeds, inputs, package, out_npz, anvil, ov, args, model, peak):
    """Times ONNX Runtime, OpenVINO and anvil one right after the other on t threads (none of
    them without feeds: the export failed)."""
    errors = []
    ort_ms = ort_out = ov_ms = ov_out = anvil_ms = None
    if feeds is not None:
        try:
            ort_ms, ort_out = ort_latency(onnx_path, feeds, t, args.repeat)
        except Exception as error:
            errors.append(f"onnxruntime: {one_line(error)}")
    if ov is not None and feeds is not None:
        try:
            ov_ms, ov_out = openvino_latency(ov, onnx_path, feeds, t, args.repeat)
        except Exception as error:
            errors.append(f"openvino: {one_line(error)}")
    if package is not None:
        try:
            anvil_ms = anvil_latency(anvil, package, inputs, out_npz, t, args.repeat)
        except ToolError as error:
            print(error.message, file=sys.stderr, flush=True)
            errors.append(f"anvil run: {error.summary}")
    diff = ov_diff = None
    if anvil_ms is not None and ort_out is not None:
        try:
            diff = max_abs_diff(out_npz, ort_out)
        except ToolError as error:
            errors.append(f"anvil outputs: {error.summary}")
    if ov_out is not None and ort_out is not None:
        try:
            ov_diff = outputs_max_abs_diff(ov_out, ort_out, who="OpenVINO")
        except ToolError as error:
            errors.append(f"openvino outputs: {error.summary}")

    flops = model["flops"]
    peers = {p: ms for p, ms in (("onnxruntime", ort_ms), ("openvino", ov_ms)) if ms is not None}
    peer = min(peers, key=peers.get) if peers else None

    def ratio(a, b):
        return a / b if a is not None and b is not None else None

    def gflops(ms):
        return flops / (ms * 1e6) if flops is not None and ms is not None else None

    def pct(ms):
        return 100 * gflops(ms) / peak if gflops(ms) is not None else None

    return {
        "model": name, "threads": t, "anvil_ms": anvil_ms, "ort_ms": ort_ms, "openvino_ms": ov_ms,
        "ratio": ratio(anvil_ms, ort_ms), "ratio_vs_openvino": ratio(anvil_ms, ov_ms),
        "peer": peer, "ratio_vs_peer": ratio(anvil_ms, peers.get(peer)),
        "anvil_gflops": gflops(anvil_ms), "ort_gflops": gflops(ort_ms),
        "openvino_gflops": gflops(ov_ms), "peak_gflops": peak,
        "anvil_pct_peak": pct(anvil_ms), "ort_pct_peak": pct(ort_ms),
        "openvino_pct_peak": pct(ov_ms),
        "max_abs_diff": diff, "openvino_max_abs_diff": ov_diff,
        "flops": flops, "compile_s": model["compile_s"], "errors": errors,
    }


def measure_model(name, onnx_path, inputs, anvil, ov, args, tmp, package=None, compile_s=None):
    """measure_row for each of args.threads. The model is compiled once at -O3 into tmp unless
    `package` is given (a package compiled before, or the ONNX file itself, which `anvil run`
    compiles in memory); a failed compile gives each thread count a row with the error."""
    import numpy as np

    if package is None:
        package = tmp / f"{name}.tar"
        try:
            compile_s = anvil_compile(anvil, onnx_path, package, 3)
        except ToolError as error:
            print(f"{name}: {error.summary}", flush=True)
            return [{"model": name, "threads": t, "errors": [error.summary]} for t in args.threads]
    feeds = dict(np.load(inputs))
    return [measure_row(name, t, onnx_path, feeds, inputs, package, tmp / f"{name}.out.npz",
                        anvil, ov, args, {"flops": None, "compile_s": compile_s}, None)
            for t in args.threads]


def peers_line(ov):
    """anvil against the two peers' versions, and the CPU: the heading of a results table."""
    import onnxruntime

    return (f"anvil -O3 against onnxruntime {onnxruntime.__version__} and openvino "
            f"{ov.get_version() if ov else '-'}, CPU: {cpu_name()}")


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.strip().splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.strip().splitlines()[1:]))
    parser.add_argument("--build-dir", default=str(ROOT / "build"),
                        help="build tree holding the anvil binary; models are cached in its "
                             "bench-cache/ (default: %(default)s)")
    parser.add_argument("--models", nargs="+", choices=ALL_MODELS,
                        default=DEFAULT_MODELS, metavar="MODEL",
                        help=f"models to measure, any of {' '.join(ALL_MODELS)} "
                             f"(default: all {len(DEFAULT_MODELS)})")
    parser.add_argument("--threads", nargs="+", type=positive_int, default=DEFAULT_THREADS,
                        metavar="T", help="thread counts, each used for all three (default: 1 2)")
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
        warn(f"onnxruntime {onnxruntime.__version__} is installed, requirements.txt pins {pinned}")
    ov = openvino_module()
    ov_version = ov.get_version() if ov is not None else None
    if ov is None:
        warn("the openvino package is not installed: its columns read \"-\" and the faster peer "
             "is ONNX Runtime (pip install openvino)")

    cache = build / "bench-cache"
    cache.mkdir(parents=True, exist_ok=True)
    export_failed = export_models_once(cache, models)

    peaks = {}
    for t in thread_counts:
        peaks[t], vector_bits = measure_peak_gflops(anvil, t)
        print(f"measured FP32 peak, {t} thread(s): {peaks[t]:.1f} GFLOP/s "
              f"({vector_bits}-bit vectors)", flush=True)

    rows, per_model = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name in models:
            model = per_model[name] = {"flops": None, "compile_s": None, "memory_ratio": None,
                                       "errors": []}
            onnx_path = cache / f"{name}.onnx"
            inputs = cache / f"{name}.input.npz"
            package = feeds = None
            if name in export_failed:
                model["errors"].append(export_failed[name])
            else:
                feeds = dict(np.load(inputs))
                try:
                    model["flops"], model["memory_ratio"] = model_analysis(anvil, onnx_path)
                except ToolError as error:
                    print(error.message, file=sys.stderr, flush=True)
                    model["errors"].append(f"anvil analyze: {error.summary}")
                try:
                    model["compile_s"] = anvil_compile(anvil, onnx_path, tmp / f"{name}.tar",
                                                       args.opt_level)
                    package = tmp / f"{name}.tar"
                except ToolError as error:
                    print(error.message, file=sys.stderr, flush=True)
                    model["errors"].append(f"anvil compile: {error.summary}")
            print(f"{name}: " + ", ".join(
                [f"{model['flops'] / 1e9:.3f} GFLOP" if model["flops"] is not None else
                 "FLOPs unknown",
                 f"compiled in {model['compile_s']:.1f} s" if package else "not compiled"]),
                flush=True)
            for t in thread_counts:
                row = measure_row(name, t, onnx_path, feeds, inputs, package,
                                  tmp / f"{name}.{t}.out.npz", anvil, ov, args, model, peaks[t])
                rows.append(row)
                print(f"  {t} thread(s): anvil {fmt(row['anvil_ms'], '.2f')} ms, onnxruntime "
                      f"{fmt(row['ort_ms'], '.2f')} ms, openvino {fmt(row['openvino_ms'], '.2f')}"
                      f" ms (anvil / faster peer: {fmt(row['ratio_vs_peer'], '.2f', 'x')})"
                      + "".join(f"; {e}" for e in row["errors"]), flush=True)

    summaries = peer_summaries(rows, thread_counts)
    failures = []
    for name in models:
        failures += [{"model": name, "threads": None, "error": e}
                     for e in per_model[name]["errors"]]
        failures += [{"model": name, "threads": r["threads"], "error": e}
                     for r in rows if r["model"] == name for e in r["errors"]]

    print(f"\nanvil -O{args.opt_level} against onnxruntime {onnxruntime.__version__} and "
          + (f"openvino {ov_version}" if ov_version else "no openvino (not installed)")
          + f", median of {args.repeat} runs, same threads for all; ratio vs ORT = anvil / "
          "onnxruntime, ratio vs faster peer = anvil / min(onnxruntime, openvino); max abs diff "
          "against onnxruntime's outputs; % peak against the FP32 peak measured on those "
          "threads (" + ", ".join(f"{t} thread{'s' if t > 1 else ''}: {peaks[t]:.1f} GFLOP/s"
                                  for t in thread_counts) + ")\n")
    print(markdown_table(rows))
    print()
    for t in thread_counts:
        s = summaries[str(t)]
        label = f"{t} thread{'s' if t > 1 else ''}"
        if not s["models"]:
            print(f"{label}: no model has a ratio vs the faster peer")
            continue
        print(f"{label}: geometric mean of anvil / faster peer over {s['models']} model"
              f"{'s' if s['models'] > 1 else ''}: {s['geomean_ratio_vs_peer']:.2f}x; worst: "
              f"{s['worst_model']} {s['worst_ratio_vs_peer']:.2f}x (against {s['worst_peer']})"
              + (f"; without a ratio: {' '.join(s['models_missing'])}"
                 if s["models_missing"] else ""))
    if failures:
        print(f"\nfailures ({len(failures)}):")
        for f in failures:
            where = f["model"] if f["threads"] is None else f"{f['model']}, {f['threads']} thread(s)"
            print(f"- {where}: {f['error']}")
    planned = {name: m["memory_ratio"] for name, m in per_model.items()
               if m["memory_ratio"] is not None}
    if planned:
        worst_memory = max(planned, key=planned.get)
        over = [f"{name} {ratio:.2f}x" for name, ratio in planned.items() if ratio > 1.2]
        print(f"\nmemory plan (anvil analyze: activations planned / largest live set) over "
              f"{len(planned)} models: worst {worst_memory} {planned[worst_memory]:.2f}x; over 1.2x: "
              + (", ".join(over) if over else "none"))
    resnet50 = per_model.get("resnet50")
    print()
    if resnet50 and resnet50["compile_s"] is not None:
        print(f"resnet50 compile time: {resnet50['compile_s']:.1f} s")
    elif resnet50:
        print("resnet50 compile time: not measured (its compile failed)")
    else:
        print("resnet50 compile time: not measured (resnet50 is not in --models)")

    if args.json:
        result = {
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "cpu": cpu_name(), "cpu_count": os.cpu_count(),
            "anvil": str(anvil), "opt_level": args.opt_level, "repeat": args.repeat,
            "onnxruntime": onnxruntime.__version__, "onnxruntime_pinned": pinned,
            "openvino": ov_version,
            "threads": thread_counts,
            "peak_gflops": {str(t): peaks[t] for t in thread_counts},
            "models": per_model,
            "resnet50_compile_s": resnet50["compile_s"] if resnet50 else None,
            "rows": rows,
            "summary": summaries,
            "failures": failures,
        }
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
        print(f"results written to {args.json}")


if __name__ == "__main__":
    main()
