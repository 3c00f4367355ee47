"""anvil against ONNX Runtime and OpenVINO on one-op models of the convolution families, in one run.

    .venv/bin/python bench/op_family_bench.py [--cases conv1d_k10s5 ...] [--threads 1 2]
                                              [--repeat 20] [--build-dir build] [--json FILE]

Each case is one torch module (random weights, seed 0) exported to ONNX (opset 13) into
<build-dir>/bench-cache/ops/, with a seeded input of batch 1:
  - conv1d_k10s5, conv1d_k3s2, conv1d_grouped_k31: the front end and the positional convolution
    of wav2vec-style audio encoders;
  - conv3d_3x3x3, conv3d_1x3x3, conv3d_3x1x1: the convolutions of 3-D and (2+1)-D video ResNets;
  - convT1d_k4s2, convT2d_k2s2, convT2d_k4s2, convT3d_k2s2, convT3d_k4s2: the up-sampling
    convolutions of decoders and UNets;
  - groupnorm: GroupNorm(32, 256) over 32x32; groupnorm_audio: GroupNorm(512, 512) over 3200
    steps (wav2vec's first layer); layernorm_vit, softmax_vit: a ViT-B block's norm and
    attention softmax; softmax_dynamic: the softmax exported with symbolic rows and length;
  - dw3x3s1, dw3x3s2, dw5x5s1, dw5x5s2: depthwise convolutions of 144 channels over 56x56;
  - conv2d_dynamic_hw: a 3x3 convolution exported with symbolic height and width, run at
    57x61, a size it was not exported at;
  - for every case with multiply-adds, `<case>.conv2d_same_macs`: a static 3x3 convolution of
    64 to 64 channels over a square image with (about) the same MACs, the blocked conv2d the
    case is compared with.
Timing and the three runtimes are bench/model_bench.py's (the same helpers): anvil `compile -O3`
and `run --print-time`, ONNX Runtime and OpenVINO (f32) in this process, same threads, median of
--repeat. The table gives, per case and thread count, the three latencies, anvil / faster peer,
anvil's GFLOP/s, and anvil's GFLOP/s as a fraction of the same-MACs conv2d's.
"""
import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import model_bench as mb  # noqa: E402

# name: (torch module expression, input shape, dynamic axes or None, run shape or None)
CASES = {
    "conv1d_k10s5": ("nn.Conv1d(1, 512, 10, stride=5)", [1, 1, 16000], None, None),
    "conv1d_k3s2": ("nn.Conv1d(512, 512, 3, stride=2)", [1, 512, 1600], None, None),
    "conv1d_grouped_k31": ("nn.Conv1d(256, 256, 31, padding=15, groups=16)", [1, 256, 500],
                           None, None),
    "conv3d_3x3x3": ("nn.Conv3d(64, 64, 3, padding=1)", [1, 64, 8, 28, 28], None, None),
    "conv3d_1x3x3": ("nn.Conv3d(64, 64, (1, 3, 3), padding=(0, 1, 1))", [1, 64, 8, 28, 28],
                     None, None),
    "conv3d_3x1x1": ("nn.Conv3d(64, 64, (3, 1, 1), padding=(1, 0, 0))", [1, 64, 8, 28, 28],
                     None, None),
    "convT1d_k4s2": ("nn.ConvTranspose1d(256, 128, 4, stride=2, padding=1)", [1, 256, 500],
                     None, None),
    "convT2d_k2s2": ("nn.ConvTranspose2d(128, 64, 2, stride=2)", [1, 128, 32, 32], None, None),
    "convT2d_k4s2": ("nn.ConvTranspose2d(128, 64, 4, stride=2, padding=1)", [1, 128, 32, 32],
                     None, None),
    "convT3d_k2s2": ("nn.ConvTranspose3d(64, 32, 2, stride=2)", [1, 64, 4, 16, 16], None, None),
    "convT3d_k4s2": ("nn.ConvTranspose3d(64, 32, 4, stride=2, padding=1)", [1, 64, 4, 16, 16],
                     None, None),
    "groupnorm": ("nn.GroupNorm(32, 256)", [1, 256, 32, 32], None, None),
    "groupnorm_audio": ("nn.GroupNorm(512, 512)", [1, 512, 3200], None, None),
    "layernorm_vit": ("nn.LayerNorm(768)", [1, 197, 768], None, None),
    "softmax_vit": ("nn.Softmax(-1)", [1, 12, 197, 197], None, None),
    "softmax_dynamic": ("nn.Softmax(-1)", [1, 12, 64, 64], {2: "s", 3: "t"}, [1, 12, 197, 197]),
    "dw3x3s1": ("nn.Conv2d(144, 144, 3, padding=1, groups=144)", [1, 144, 56, 56], None, None),
    "dw3x3s2": ("nn.Conv2d(144, 144, 3, stride=2, padding=1, groups=144)", [1, 144, 56, 56],
                None, None),
    "dw5x5s1": ("nn.Conv2d(144, 144, 5, padding=2, groups=144)", [1, 144, 56, 56], None, None),
    "dw5x5s2": ("nn.Conv2d(144, 144, 5, stride=2, padding=2, groups=144)", [1, 144, 56, 56],
                None, None),
    "conv2d_dynamic_hw": ("nn.Conv2d(64, 64, 3, padding=1)", [1, 64, 56, 56], {2: "h", 3: "w"},
                          [1, 64, 57, 61]),
}

EXPORT = r'''
import json, sys, torch
from torch import nn
spec = json.loads(sys.argv[1])
torch.manual_seed(0)
module = eval(spec["module"]).eval()
x = torch.randn(*spec["shape"])
axes = {"x": {int(k): v for k, v in spec["dynamic"].items()}} if spec["dynamic"] else None
torch.onnx.export(module, x, spec["path"], input_names=["x"], output_names=["y"],
                  opset_version=13, dynamic_axes=axes)
'''


def same_macs_conv2d(macs):
    """A 3x3 64 -> 64 conv2d over a square image with about `macs` multiply-adds."""
    side = max(4, round(math.sqrt(macs / (64 * 64 * 9))))
    return ("nn.Conv2d(64, 64, 3, padding=1)", [1, 64, side, side], None, None)


def export(name, case, cache):
    module, shape, dynamic, run_shape = case
    onnx_path = cache / f"{name}.onnx"
    inputs = cache / f"{name}.input.npz"
    spec = {"module": module, "shape": shape, "dynamic": dynamic, "path": str(onnx_path)}
    stamp = cache / f"{name}.stamp"
    if not (onnx_path.exists() and inputs.exists() and stamp.exists()
            and stamp.read_text() == json.dumps(spec)):
        result = subprocess.run([sys.executable, "-c", EXPORT, json.dumps(spec)],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise mb.ToolError(f"exporting {name} failed:\n{result.stderr[-2000:]}")
        import numpy as np

        rng = np.random.default_rng(0)
        np.savez(inputs, x=rng.standard_normal(run_shape or shape).astype(np.float32))
        stamp.write_text(json.dumps(spec))
    return onnx_path, inputs


def macs_of(anvil, onnx_path, inputs):
    """Multiply-adds at the run shape: anvil analyze's FLOPs / 2 (static models), or None."""
    try:
        flops, _ = mb.model_analysis(anvil, onnx_path)
        return flops / 2
    except mb.ToolError:
        return None


def measure(name, onnx_path, inputs, anvil, ov, threads, args, tmp, peers=True):
    """model_bench's row for one case (compiled once into tmp); without peers, anvil alone."""
    import numpy as np

    package = tmp / f"{name}.tar"
    model = {"flops": None, "compile_s": None}
    if not package.exists():
        model["compile_s"] = mb.anvil_compile(anvil, onnx_path, package, 3)
    feeds = dict(np.load(inputs)) if peers else None
    return mb.measure_row(name, threads, onnx_path, feeds, inputs, package,
                          tmp / f"{name}.out.npz", anvil, ov, args, model, None)


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--build-dir", default=str(ROOT / "build"))
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--threads", nargs="+", type=mb.positive_int, default=[1, 2])
    parser.add_argument("--repeat", type=mb.positive_int, default=20)
    parser.add_argument("--no-conv2d", action="store_true",
                        help="skip the same-MACs conv2d of each case")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    anvil = mb.anvil_binary(args.build_dir)
    ov = mb.openvino_module()
    cache = Path(args.build_dir) / "bench-cache" / "ops"
    cache.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name in args.cases:
            onnx_path, inputs = export(name, CASES[name], cache)
            static = CASES[name][2] is None
            macs = macs_of(anvil, onnx_path, inputs) if static else None
            if not static and name.startswith("conv"):  # the run shape's MACs: 3x3, 64 channels
                run = CASES[name][3]
                macs = 64 * 64 * 9 * run[2] * run[3]
            base = None
            if macs and not args.no_conv2d and name.startswith(("conv", "dw")):
                base = f"{name}.conv2d_same_macs"
                base_paths = export(base, same_macs_conv2d(macs), cache)
            for t in args.threads:
                row = measure(name, onnx_path, inputs, anvil, ov, t, args, tmp)
                row["gflops"] = 2 * macs / row["anvil_ms"] / 1e6 if macs and row["anvil_ms"] \
                    else None
                if base:
                    b = measure(base, *base_paths, anvil, None, t, args, tmp, peers=False)
                    row["conv2d_gflops"] = 2 * macs / b["anvil_ms"] / 1e6 if b["anvil_ms"] \
                        else None
                rows.append(row)
                print(f"{name} {t}t: anvil {mb.fmt(row['anvil_ms'], '.3f')} ms, ort "
                      f"{mb.fmt(row['ort_ms'], '.3f')} ms, openvino "
                      f"{mb.fmt(row['openvino_ms'], '.3f')} ms, vs peer "
                      f"{mb.fmt(row['ratio_vs_peer'], '.2f', 'x')}, "
                      f"{mb.fmt(row.get('gflops'), '.1f')} GFLOP/s (conv2d same MACs "
                      f"{mb.fmt(row.get('conv2d_gflops'), '.1f')})"
                      + "".join(f"; {e}" for e in row["errors"]), flush=True)
    print(f"\n{mb.peers_line(ov)}\n")
    print("| case | threads | anvil ms | onnxruntime ms | openvino ms | vs faster peer | "
          "GFLOP/s | of same-MACs conv2d |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        share = (r["gflops"] / r["conv2d_gflops"]
                 if r.get("gflops") and r.get("conv2d_gflops") else None)
        print(f"| {r['model']} | {r['threads']} | {mb.fmt(r['anvil_ms'], '.3f')} | "
              f"{mb.fmt(r['ort_ms'], '.3f')} | {mb.fmt(r['openvino_ms'], '.3f')} | "
              f"{mb.fmt(r['ratio_vs_peer'], '.2f', 'x')} | {mb.fmt(r.get('gflops'), '.1f')} | "
              f"{mb.fmt(share and share * 100, '.0f', '%')} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"cpu": mb.cpu_name(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
