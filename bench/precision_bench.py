"""anvil's bf16 builds against its fp32 builds, and against OpenVINO's default precision, in one run.

    .venv/bin/python bench/precision_bench.py [--models resnet50 ...] [--threads 1 2]
                                              [--repeat 20] [--build-dir build] [--json FILE]

For each model (default: ResNet-50, MobileNetV2, EfficientNet-B0, ViT-B/16 and the BERT-like
encoder of model_bench.py, exported once into <build-dir>/bench-cache with their seeded
inputs) anvil compiles two packages, `--precision fp32` and `--precision bf16`, and each runs
at every thread count (median of --repeat runs). On the same threads it times OpenVINO with its
default settings (bf16 on hosts with AMX, where OpenVINO picks it; fp32 elsewhere) and ONNX
Runtime (fp32). The table gives the latencies, bf16's speedup over fp32, bf16 against
OpenVINO's default, and the bf16 outputs against the fp32 ones: the largest difference relative
to the largest fp32 output, and whether the top-1 class (the argmax of the first output) agrees.
The host's CPU and whether it has a bf16 unit (avx512_bf16, amx_bf16) head the output.
"""

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
import model_bench as mb  # noqa: E402

DEFAULT_MODELS = ["resnet50", "mobilenet_v2", "efficientnet_b0", "vit_b_16", mb.BERT]


def cpu_description():
    name, flags = platform.processor() or "unknown CPU", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
            elif line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    units = [f for f in ("avx512_bf16", "amx_bf16", "amx_tile") if f in flags]
    return f"{name} ({', '.join(units) if units else 'no bf16 unit'})"


def openvino_default_latency(ov, onnx_path, feeds, threads, repeat):
    """OpenVINO with its default precision (no INFERENCE_PRECISION_HINT) and the precision it
    picked."""
    import numpy as np

    compiled = ov.Core().compile_model(str(onnx_path), "CPU",
                                       {"INFERENCE_NUM_THREADS": threads,
                                        "PERFORMANCE_HINT": "LATENCY"})
    hint = compiled.get_property("INFERENCE_PRECISION_HINT")
    precision = hint.to_string() if hasattr(hint, "to_string") else str(hint)
    request = compiled.create_infer_request()
    for _ in range(mb.OPENVINO_WARMUP):
        request.infer(feeds)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        request.infer(feeds)
        times.append((time.perf_counter() - start) * 1000)
    return float(np.median(times)), precision


def compare(bf16_path, fp32_path):
    import numpy as np

    bf16 = np.load(bf16_path)
    fp32 = np.load(fp32_path)
    first = sorted(fp32.files)[0]
    a, b = bf16[first].astype(np.float64), fp32[first].astype(np.float64)
    rel = float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-30))
    same_top1 = bool(a.reshape(a.shape[0], -1).argmax(1).tolist() ==
                     b.reshape(b.shape[0], -1).argmax(1).tolist())
    return rel, same_top1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=str(mb.ROOT / "build"))
    parser.add_argument("--models", nargs="+", choices=mb.ALL_MODELS, default=DEFAULT_MODELS)
    parser.add_argument("--threads", nargs="+", type=mb.positive_int, default=[1, 2])
    parser.add_argument("--repeat", type=mb.positive_int, default=mb.DEFAULT_REPEAT)
    parser.add_argument("--json", metavar="FILE", help="also write every result to FILE")
    args = parser.parse_args()

    import numpy as np
    try:
        import openvino as ov
    except ImportError:
        ov = None
    build = Path(args.build_dir)
    anvil = build / "anvil"
    cache = build / "bench-cache"
    cache.mkdir(parents=True, exist_ok=True)
    failed = mb.export_models_once(cache, args.models)
    print(f"host: {cpu_description()}; openvino {ov.get_version() if ov else 'not installed'}",
          flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name in args.models:
            if name in failed:
                print(f"{name}: export failed: {failed[name]}", flush=True)
                continue
            onnx_path, inputs = cache / f"{name}.onnx", cache / f"{name}.input.npz"
            feeds = dict(np.load(inputs))
            packages = {}
            for precision in ("fp32", "bf16"):
                package = tmp / f"{name}.{precision}.tar"
                mb.run_tool([anvil, "compile", onnx_path, "--precision", precision, "-q", "-o",
                             package])
                packages[precision] = package
            for t in args.threads:
                row = {"model": name, "threads": t}
                outs = {}
                for precision, package in packages.items():
                    outs[precision] = tmp / f"{name}.{precision}.{t}.npz"
                    row[f"{precision}_ms"] = mb.anvil_latency(anvil, package, inputs,
                                                              outs[precision], t, args.repeat)
                row["rel_err"], row["same_top1"] = compare(outs["bf16"], outs["fp32"])
                row["ort_ms"] = mb.ort_latency(onnx_path, feeds, t, args.repeat)[0]
                row["ov_ms"], row["ov_precision"] = (
                    openvino_default_latency(ov, onnx_path, feeds, t, args.repeat)
                    if ov else (None, None))
                row["speedup"] = row["fp32_ms"] / row["bf16_ms"]
                row["vs_ov"] = row["bf16_ms"] / row["ov_ms"] if row["ov_ms"] else None
                rows.append(row)
                print(f"  {name} {t} thread(s): fp32 {row['fp32_ms']:.2f} ms, bf16 "
                      f"{row['bf16_ms']:.2f} ms ({row['speedup']:.2f}x)", flush=True)

    print("\n| model | threads | anvil fp32 (ms) | anvil bf16 (ms) | bf16 speedup | "
          "OpenVINO default (ms, precision) | bf16 / OpenVINO | ONNX Runtime fp32 (ms) | "
          "bf16 max rel. diff | same top-1 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ov_text = f"{r['ov_ms']:.2f} ({r['ov_precision']})" if r["ov_ms"] else "-"
        vs_ov = f"{r['vs_ov']:.2f}x" if r["vs_ov"] else "-"
        print(f"| {r['model']} | {r['threads']} | {r['fp32_ms']:.2f} | {r['bf16_ms']:.2f} | "
              f"{r['speedup']:.2f}x | {ov_text} | {vs_ov} | {r['ort_ms']:.2f} | "
              f"{r['rel_err']:.3f} | {'yes' if r['same_top1'] else 'no'} |")
    for t in args.threads:
        speedups = [r["speedup"] for r in rows if r["threads"] == t]
        if speedups:
            geo = float(np.exp(np.mean(np.log(speedups))))
            print(f"{t} thread(s): geometric mean bf16 speedup over fp32 {geo:.2f}x, "
                  f"least {min(speedups):.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps({"host": cpu_description(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
