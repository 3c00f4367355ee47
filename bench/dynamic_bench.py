"""Dynamic shapes: one package compiled for every size against a package per size, ONNX Runtime
and OpenVINO, in one run, with the same thread counts.

    .venv/bin/python bench/dynamic_bench.py [--models resnet50 bert] [--threads 1 2]
                                            [--repeat 20] [--build-dir build] [--json FILE]

Models, exported once into <build-dir>/bench-cache with /usr/bin/python3 (Debian's PyTorch):
  - resnet50: torchvision's ResNet-50, random weights (seed 0), input (batch, 3, 224, 224) with
    a dynamic batch; sizes: batch 1, 4 and 16.
  - bert: a BERT-style encoder of our own (token and position embeddings, layer norm, 6
    encoder layers of hidden 384, 6 heads, GELU, an attention mask input), random weights
    (seed 0), inputs ids and mask of (batch, seq) with both dims dynamic; sizes: batch 1 at
    sequence 16, 64 and 256.

For each model, `anvil compile MODEL.onnx` writes one package (the VM: the model's dims are
dynamic); for each size, `anvil compile MODEL.onnx --input-shapes ...` writes a package
specialized to that size (the graph executor), the baseline of "within 1.15x (1.2x) of
static". Then, for each size and thread count T, one right after the other:
  - anvil, dynamic package and static package: `ANVIL_NUM_THREADS=T anvil run PKG --inputs
    IN.npz --print-time --repeat R` (its median);
  - ONNX Runtime on the dynamic model: CPU provider, ORT_ENABLE_ALL, intra_op_num_threads = T,
    3 warm-up runs, median of R;
  - OpenVINO on the dynamic model: CPU plugin, INFERENCE_NUM_THREADS = T, latency hint, f32
    inference precision (its default on CPUs with AVX512-BF16 is bf16, which is not the same
    computation), 3 warm-up runs, median of R (skipped when the openvino package is missing).
It prints a Markdown table, one row per (model, size, threads): the four latencies, dynamic
over static, dynamic over ONNX Runtime, dynamic over OpenVINO, and the largest absolute
difference between anvil's dynamic package and ONNX Runtime. A model whose dynamic package
cannot be written is reported with the reason and skipped.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import model_bench  # noqa: E402  (shares the timing and tool helpers)

EXPORT_SCRIPT = r'''
import sys, torch
torch.manual_seed(0)
name, path = sys.argv[1], sys.argv[2]
if name == "resnet50":
    import torchvision
    model = torchvision.models.resnet50(weights=None).eval()
    args = (torch.randn(1, 3, 224, 224),)
    names, outputs = ["input"], ["output"]
    axes = {"input": {0: "batch"}, "output": {0: "batch"}}
else:
    import torch.nn as nn
    class Encoder(nn.Module):
        def __init__(self, vocab=1000, hidden=384, layers=6, heads=6, max_pos=512):
            super().__init__()
            self.tok = nn.Embedding(vocab, hidden)
            self.pos = nn.Embedding(max_pos, hidden)
            self.norm = nn.LayerNorm(hidden)
            layer = nn.TransformerEncoderLayer(hidden, heads, 4 * hidden, dropout=0.0,
                                               activation="gelu", batch_first=True)
            self.enc = nn.TransformerEncoder(layer, layers)
        def forward(self, ids, mask):
            pos = torch.arange(ids.shape[1]).unsqueeze(0)
            x = self.norm(self.tok(ids) + self.pos(pos))
            return self.enc(x, src_key_padding_mask=mask == 0)
    model = Encoder().eval()
    args = (torch.randint(0, 1000, (2, 16)), torch.ones(2, 16, dtype=torch.int64))
    names, outputs = ["ids", "mask"], ["output"]
    axes = {"ids": {0: "batch", 1: "seq"}, "mask": {0: "batch", 1: "seq"},
            "output": {0: "batch", 1: "seq"}}
# Not under no_grad: there PyTorch 1.13's encoder takes its nested-tensor fast path, which
# does not export.
torch.onnx.export(model, args, path, input_names=names, output_names=outputs,
                  dynamic_axes=axes, opset_version=13)
'''

# (label, {input: shape}) per model.
SIZES = {
    "resnet50": [(f"batch {b}", {"input": [b, 3, 224, 224]}) for b in (1, 4, 16)],
    "bert": [(f"seq {s}", {"ids": [1, s], "mask": [1, s]}) for s in (16, 64, 256)],
}
ORT_WARMUP = 3


def export(cache, name):
    path = cache / f"{name}_dynamic.onnx"
    if not path.exists():
        tmp = path.with_suffix(".tmp.onnx")
        result = subprocess.run(["/usr/bin/python3", "-c", EXPORT_SCRIPT, name, str(tmp)],
                                capture_output=True, text=True)
        if result.returncode != 0:
            model_bench.fail(f"exporting {name} failed:\n{result.stderr[-2000:]}")
        tmp.rename(path)
    return path


def make_inputs(shapes, seed):
    import numpy as np

    rng = np.random.RandomState(seed)
    feeds = {}
    for name, shape in shapes.items():
        if name == "ids":
            feeds[name] = rng.randint(0, 1000, size=shape).astype(np.int64)
        elif name == "mask":
            mask = np.ones(shape, dtype=np.int64)
            mask[:, shape[1] * 3 // 4:] = 0  # padding at the end of each sequence
            feeds[name] = mask
        else:
            feeds[name] = rng.randn(*shape).astype(np.float32)
    return feeds


def try_compile(anvil, onnx_path, package, extra):
    result = subprocess.run([str(anvil), "compile", str(onnx_path), "-o", str(package), "-q",
                             *extra], capture_output=True, text=True)
    if result.returncode != 0:
        return (result.stdout + result.stderr).strip().splitlines()[-1]
    return None


def openvino_latency(onnx_path, feeds, threads, repeat):
    try:
        import openvino as ov
    except ImportError:
        return None
    import numpy as np

    core = ov.Core()
    compiled = core.compile_model(str(onnx_path), "CPU",
                                  {"INFERENCE_NUM_THREADS": threads,
                                   "PERFORMANCE_HINT": "LATENCY",
                                   "INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    for _ in range(ORT_WARMUP):
        request.infer(feeds)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        request.infer(feeds)
        times.append((time.perf_counter() - start) * 1000)
    return float(np.median(times))


def markdown_table(rows):
    header = ["model", "size", "threads", "anvil dynamic ms", "anvil static ms",
              "onnxruntime ms", "openvino ms", "dynamic / static", "dynamic / ORT",
              "dynamic / OpenVINO", "max abs diff"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        ov = r["openvino_ms"]
        cells = [r["model"], r["size"], str(r["threads"]), f"{r['dynamic_ms']:.2f}",
                 f"{r['static_ms']:.2f}", f"{r['ort_ms']:.2f}",
                 "-" if ov is None else f"{ov:.2f}",
                 f"{r['dynamic_ms'] / r['static_ms']:.2f}x",
                 f"{r['dynamic_ms'] / r['ort_ms']:.2f}x",
                 "-" if ov is None else f"{r['dynamic_ms'] / ov:.2f}x",
                 f"{r['max_abs_diff']:.1e}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--build-dir", default=str(ROOT / "build"))
    parser.add_argument("--models", nargs="+", choices=sorted(SIZES), default=["resnet50", "bert"])
    parser.add_argument("--threads", nargs="+", type=model_bench.positive_int, default=[1, 2])
    parser.add_argument("--repeat", type=model_bench.positive_int, default=20)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()

    import numpy as np

    build = Path(args.build_dir)
    anvil = build / "anvil"
    if not anvil.is_file():
        model_bench.fail(f"no anvil binary at {anvil} (build it first: make build)", code=2)
    cache = build / "bench-cache"
    cache.mkdir(parents=True, exist_ok=True)
    print(f"CPU: {model_bench.cpu_name()}", flush=True)

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name in model_bench.unique(args.models):
            onnx_path = export(cache, name)
            dynamic = tmp / f"{name}_dynamic.tar"
            why = try_compile(anvil, onnx_path, dynamic, [])
            if why:
                print(f"{name}: the dynamic package cannot be written: {why}", flush=True)
                continue
            for k, (label, shapes) in enumerate(SIZES[name]):
                feeds = make_inputs(shapes, seed=k)
                inputs = tmp / f"{name}_{k}.npz"
                np.savez(inputs, **feeds)
                spec = " ".join(f"{n}:[{','.join(map(str, s))}]" for n, s in shapes.items())
                static = tmp / f"{name}_static_{k}.tar"
                why = try_compile(anvil, onnx_path, static, ["--input-shapes", spec])
                if why:
                    model_bench.fail(f"{name} at {label}: the static package: {why}")
                outputs = tmp / f"{name}_{k}_out.npz"
                for t in model_bench.unique(args.threads):
                    dynamic_ms = model_bench.anvil_latency(anvil, dynamic, inputs, outputs, t,
                                                           args.repeat)
                    static_ms = model_bench.anvil_latency(anvil, static, inputs,
                                                          tmp / "static_out.npz", t, args.repeat)
                    ort_ms, ort_outputs = model_bench.ort_latency(onnx_path, feeds, t,
                                                                  args.repeat)
                    ov_ms = openvino_latency(onnx_path, feeds, t, args.repeat)
                    row = {"model": name, "size": label, "threads": t, "dynamic_ms": dynamic_ms,
                           "static_ms": static_ms, "ort_ms": ort_ms, "openvino_ms": ov_ms,
                           "max_abs_diff": model_bench.max_abs_diff(outputs, ort_outputs)}
                    rows.append(row)
                    print(f"{name} {label} T={t}: dynamic {dynamic_ms:.2f} ms, static "
                          f"{static_ms:.2f} ms, ORT {ort_ms:.2f} ms"
                          + ("" if ov_ms is None else f", OpenVINO {ov_ms:.2f} ms"), flush=True)
    print()
    print(markdown_table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps({"cpu": model_bench.cpu_name(), "rows": rows},
                                              indent=2))


if __name__ == "__main__":
    main()
