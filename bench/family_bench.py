"""anvil against ONNX Runtime and OpenVINO on model families nobody tuned anvil for, in one run.

    .venv/bin/python bench/family_bench.py [--models audio_base ...] [--threads 1 2]
                                           [--repeat 10] [--build-dir build] [--json FILE]

Each network is built from torch modules (random weights, seed 0, eval mode), exported to ONNX
(opset 13) into <build-dir>/bench-cache/families/ with a seeded input:
  - audio encoders (wav2vec-style): a strided Conv1d feature stack (kernels 10, 3, 3, 3, 3, 2, 2,
    strides 5, 2, ...) with GroupNorm after the first layer and GELU, a grouped Conv1d positional
    embedding (kernel 31), LayerNorm and a projection; audio_small (256 channels, 1 s of 16 kHz
    audio) and audio_base (512 channels, 2 s);
  - 3-D video ResNets: torchvision's r3d_18 (Conv3d 3x3x3), mc3_18 (3-D stem, 2-D later) and
    r2plus1d_18 (1x3x3 and 3x1x1), on 8 frames of 112x112;
  - UNets (diffusion-style): GroupNorm, SiLU, ConvTranspose2d stride 2 and attention at the
    bottom; unet_small (32 base channels, 64x64) and unet_base (64 base channels, 64x64);
  - CNNs with dynamic height and width: torchvision's mobilenet_v2, resnet18 and mnasnet0_5
    exported with symbolic H and W at 224x224 and run at 200x288, a size they were not
    exported at (anvil compiles them for its VM).
The audio encoder and UNet modules are tests/models/family_networks.py's (the model tests export
small ones). Timing and the three runtimes are bench/model_bench.py's helpers: anvil `compile -O3` and
`run --print-time`, ONNX Runtime and OpenVINO (f32) in this process, same threads, median.
"""
import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The torch modules of the audio encoders and UNets, shared with the model tests.
NETWORKS = ROOT / "tests" / "models" / "family_networks.py"
sys.path.insert(0, str(ROOT / "bench"))
import model_bench as mb  # noqa: E402

# name: (family, builder expression in EXPORT's namespace, export shape, dynamic axes, run shape)
MODELS = {
    "audio_small": ("audio", "AudioEncoder(256)", [1, 1, 16000], None, None),
    "audio_base": ("audio", "AudioEncoder(512)", [1, 1, 32000], None, None),
    "r3d_18": ("video", "video.r3d_18()", [1, 3, 8, 112, 112], None, None),
    "mc3_18": ("video", "video.mc3_18()", [1, 3, 8, 112, 112], None, None),
    "r2plus1d_18": ("video", "video.r2plus1d_18()", [1, 3, 8, 112, 112], None, None),
    "unet_small": ("unet", "UNet(32)", [1, 4, 64, 64], None, None),
    "unet_base": ("unet", "UNet(64)", [1, 4, 64, 64], None, None),
    "mobilenet_v2_dyn": ("dynamic", "models.mobilenet_v2()", [1, 3, 224, 224],
                         {2: "h", 3: "w"}, [1, 3, 200, 288]),
    "resnet18_dyn": ("dynamic", "models.resnet18()", [1, 3, 224, 224], {2: "h", 3: "w"},
                     [1, 3, 200, 288]),
    "mnasnet0_5_dyn": ("dynamic", "models.mnasnet0_5()", [1, 3, 224, 224], {2: "h", 3: "w"},
                       [1, 3, 200, 288]),
}

EXPORT = r'''
import json, sys, torch
from torch import nn
from torchvision import models
from torchvision.models import video
sys.path.insert(0, json.loads(sys.argv[1])["networks"])
from family_networks import AudioEncoder, UNet

spec = json.loads(sys.argv[1])
torch.manual_seed(0)
model = eval(spec["builder"]).eval()
x = torch.randn(*spec["shape"])
axes = {"x": {int(k): v for k, v in spec["dynamic"].items()}} if spec["dynamic"] else None
with torch.no_grad():
    torch.onnx.export(model, x, spec["path"], input_names=["x"], output_names=["y"],
                      opset_version=13, dynamic_axes=axes)
'''


def export(name, cache):
    family, builder, shape, dynamic, run_shape = MODELS[name]
    onnx_path = cache / f"{name}.onnx"
    inputs = cache / f"{name}.input.npz"
    spec = {"builder": builder, "shape": shape, "dynamic": dynamic, "path": str(onnx_path),
            "export": EXPORT, "networks": str(NETWORKS.parent),
            "networks_sha256": hashlib.sha256(NETWORKS.read_bytes()).hexdigest()}
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--build-dir", default=str(ROOT / "build"))
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    parser.add_argument("--threads", nargs="+", type=mb.positive_int, default=[1, 2])
    parser.add_argument("--repeat", type=mb.positive_int, default=10)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    anvil = mb.anvil_binary(args.build_dir)
    ov = mb.openvino_module()
    cache = Path(args.build_dir) / "bench-cache" / "families"
    cache.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name in args.models:
            family = MODELS[name][0]
            try:
                onnx_path, inputs = export(name, cache)
            except mb.ToolError as error:
                print(f"{name}: {error.summary}", flush=True)
                rows += [{"model": name, "family": family, "threads": t, "errors": [error.summary]}
                         for t in args.threads]
                continue
            for row in mb.measure_model(name, onnx_path, inputs, anvil, ov, args, tmp):
                row["family"] = family
                rows.append(row)
                print(f"{name} {row['threads']}t: anvil {mb.fmt(row.get('anvil_ms'), '.2f')} ms, ort "
                      f"{mb.fmt(row.get('ort_ms'), '.2f')} ms, openvino "
                      f"{mb.fmt(row.get('openvino_ms'), '.2f')} ms, vs peer "
                      f"{mb.fmt(row.get('ratio_vs_peer'), '.2f', 'x')}, max abs diff "
                      f"{mb.fmt(row.get('max_abs_diff'), '.1e')}"
                      + "".join(f"; {e}" for e in row["errors"]), flush=True)
    print(f"\n{mb.peers_line(ov)}, median of {args.repeat}\n")
    print("| model | family | threads | anvil ms | onnxruntime ms | openvino ms | "
          "vs faster peer | max abs diff |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['family']} | {r['threads']} | "
              f"{mb.fmt(r.get('anvil_ms'), '.2f')} | {mb.fmt(r.get('ort_ms'), '.2f')} | "
              f"{mb.fmt(r.get('openvino_ms'), '.2f')} | "
              f"{mb.fmt(r.get('ratio_vs_peer'), '.2f', 'x')} | "
              f"{mb.fmt(r.get('max_abs_diff'), '.1e')} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"cpu": mb.cpu_name(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
