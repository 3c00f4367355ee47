"""anvil against ONNX Runtime and OpenVINO on torchvision's detection models, post-processing
included, in one run.

    .venv/bin/python bench/detection_bench.py [--models fcos_resnet50_fpn ...] [--threads 2]
                                              [--repeat 5] [--build-dir build] [--json FILE]

The models are the model tests' (tests/models/export_models.py DETECTION_MODELS: SSDlite320
MobileNetV3, FCOS ResNet-50 FPN, Faster R-CNN ResNet-50 FPN; random weights, seed 0, score
thresholds lowered so that boxes come out) on their one 320x320 image, exported into
<build-dir>/model-cache by that script when missing. bench/model_bench.py times anvil (`run
--print-time`, median of --repeat), ONNX Runtime (CPU, ORT_ENABLE_ALL) and OpenVINO (CPU, f32,
latency hint) one right after the other, same threads. The largest absolute difference from
ONNX Runtime is over the outputs as they come (boxes, labels, scores in ONNX Runtime's order);
the model tests match detections as sets. anvil runs the ONNX file (`anvil run MODEL.onnx`,
compiled in memory): these models' packages cannot be saved yet.
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "models"))
import model_bench as mb  # noqa: E402

MODELS = ["ssdlite320_mobilenet_v3_large", "fcos_resnet50_fpn", "fasterrcnn_resnet50_fpn"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--build-dir", default=str(ROOT / "build"))
    parser.add_argument("--models", nargs="+", choices=MODELS, default=MODELS)
    parser.add_argument("--threads", nargs="+", type=mb.positive_int, default=[2])
    parser.add_argument("--repeat", type=mb.positive_int, default=5)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    anvil = mb.anvil_binary(args.build_dir)
    cache = Path(args.build_dir) / "model-cache"
    missing = [m for m in args.models if not (cache / f"{m}.stamp").exists()]
    if missing:
        result = subprocess.run([str(ROOT / ".venv" / "bin" / "python"),
                                 str(ROOT / "tests" / "models" / "export_models.py"),
                                 "--build-dir", args.build_dir, *missing])
        if result.returncode != 0:
            mb.fail(f"exporting {missing} failed")
    ov = mb.openvino_module()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name in args.models:
            onnx_path, inputs = cache / f"{name}.onnx", cache / f"{name}.input.npz"
            # Their packages cannot be saved yet (gather_nd over a run-time count and Faster
            # R-CNN's scatter_elements run as closures over the reference kernels), so anvil
            # runs the ONNX file, compiling it in memory before the timed runs.
            for row in mb.measure_model(name, onnx_path, inputs, anvil, ov, args, tmp,
                                        package=onnx_path):
                rows.append(row)
                print(f"{name} {row['threads']}t: anvil {mb.fmt(row['anvil_ms'], '.1f')} ms, ort "
                      f"{mb.fmt(row['ort_ms'], '.1f')} ms, openvino "
                      f"{mb.fmt(row['openvino_ms'], '.1f')} ms"
                      + "".join(f"; {e}" for e in row["errors"]), flush=True)
    print(f"\n{mb.peers_line(ov)}, 320x320, median of {args.repeat}\n")
    print("| model | threads | anvil ms | onnxruntime ms | openvino ms | vs faster peer | "
          "max abs diff | compile s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['threads']} | {mb.fmt(r.get('anvil_ms'), '.1f')} | "
              f"{mb.fmt(r.get('ort_ms'), '.1f')} | {mb.fmt(r.get('openvino_ms'), '.1f')} | "
              f"{mb.fmt(r.get('ratio_vs_peer'), '.2f', 'x')} | "
              f"{mb.fmt(r.get('max_abs_diff'), '.1e')} | {mb.fmt(r.get('compile_s'), '.1f')} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"cpu": mb.cpu_name(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
