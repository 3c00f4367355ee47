"""anvil against ONNX Runtime and OpenVINO on recurrent layers over a grid of sizes, in one run.

    .venv/bin/python bench/recurrent_bench.py [--cells lstm gru bigru] [--grid default|full]
                                              [--threads 2] [--repeat 20] [--build-dir build]
                                              [--json FILE]

Each point of the grid is one ONNX node (opset 14), LSTM, GRU or bidirectional GRU (bigru),
written here with onnx.helper: input X of (sequence, batch, hidden) (input features equal to
the hidden size), W, R and B as initializers (seeded normal weights scaled by 1/sqrt(hidden),
so the gates do not saturate), outputs Y, Y_h (and Y_c). The models go to
<build-dir>/bench-cache/recurrent/ with a seeded input each.

--grid default times, for each cell, the corners and middle of the range the recurrent target
covers (hidden 64-512, sequence 16-512, batch 1-8):
    (hidden, sequence, batch) in (64, 16, 1) (64, 512, 8) (256, 128, 1) (256, 128, 8)
                                 (512, 16, 8) (512, 512, 1)
--grid full times every combination of hidden 64/256/512, sequence 16/128/512, batch 1/8.

Timing and the three runtimes are bench/model_bench.py's: anvil `compile -O3` and `run
--print-time` (median of --repeat), ONNX Runtime (CPU provider, ORT_ENABLE_ALL) and OpenVINO
(CPU, f32, latency hint) in this process, same thread counts, one right after the other.
It prints a Markdown table with the three latencies, anvil over the faster peer and the largest
absolute difference from ONNX Runtime, then the geometric mean and the worst point.
"""
import argparse
import itertools
import json
import math
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import model_bench as mb  # noqa: E402

DEFAULT_GRID = [(64, 16, 1), (64, 512, 8), (256, 128, 1), (256, 128, 8), (512, 16, 8),
                (512, 512, 1)]
FULL_GRID = list(itertools.product([64, 256, 512], [16, 128, 512], [1, 8]))
GATES = {"lstm": 4, "gru": 3, "bigru": 3}


def write_model(cell, hidden, seq, batch, onnx_path, inputs_path):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(hidden * 1000003 + seq * 101 + batch)
    directions = 2 if cell == "bigru" else 1
    gates = GATES[cell]
    scale = 1.0 / math.sqrt(hidden)
    weights = {
        "W": (rng.standard_normal((directions, gates * hidden, hidden)) * scale),
        "R": (rng.standard_normal((directions, gates * hidden, hidden)) * scale),
        "B": (rng.standard_normal((directions, 2 * gates * hidden)) * scale),
    }
    inits = [numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()]
    outputs = ["Y", "Y_h"] + (["Y_c"] if cell == "lstm" else [])
    node = helper.make_node("LSTM" if cell == "lstm" else "GRU", ["X", "W", "R", "B"], outputs,
                            hidden_size=hidden,
                            direction="bidirectional" if directions == 2 else "forward",
                            **({"linear_before_reset": 1} if cell != "lstm" else {}))
    out_shapes = {"Y": [seq, directions, batch, hidden], "Y_h": [directions, batch, hidden],
                  "Y_c": [directions, batch, hidden]}
    graph = helper.make_graph(
        [node], f"{cell}_{hidden}_{seq}_{batch}",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [seq, batch, hidden])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, out_shapes[o]) for o in outputs],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.save(model, str(onnx_path))
    np.savez(inputs_path, X=rng.standard_normal((seq, batch, hidden)).astype(np.float32))


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--build-dir", default=str(ROOT / "build"))
    parser.add_argument("--cells", nargs="+", choices=list(GATES), default=list(GATES))
    parser.add_argument("--grid", choices=["default", "full"], default="default")
    parser.add_argument("--threads", nargs="+", type=mb.positive_int, default=[2])
    parser.add_argument("--repeat", type=mb.positive_int, default=20)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    anvil = mb.anvil_binary(args.build_dir)
    ov = mb.openvino_module()
    cache = Path(args.build_dir) / "bench-cache" / "recurrent"
    cache.mkdir(parents=True, exist_ok=True)
    grid = DEFAULT_GRID if args.grid == "default" else FULL_GRID
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for cell in args.cells:
            for hidden, seq, batch in grid:
                name = f"{cell}_h{hidden}_s{seq}_b{batch}"
                onnx_path, inputs = cache / f"{name}.onnx", cache / f"{name}.input.npz"
                if not (onnx_path.exists() and inputs.exists()):
                    write_model(cell, hidden, seq, batch, onnx_path, inputs)
                base = {"model": name, "cell": cell, "hidden": hidden, "sequence": seq,
                        "batch": batch}
                for row in mb.measure_model(name, onnx_path, inputs, anvil, ov, args, tmp):
                    row.update(base)
                    rows.append(row)
                    print(f"{name} {row['threads']}t: anvil {mb.fmt(row.get('anvil_ms'), '.3f')} ms, ort "
                          f"{mb.fmt(row.get('ort_ms'), '.3f')} ms, openvino "
                          f"{mb.fmt(row.get('openvino_ms'), '.3f')} ms, vs peer "
                          f"{mb.fmt(row.get('ratio_vs_peer'), '.2f', 'x')}, compile "
                          f"{mb.fmt(row.get('compile_s'), '.1f')} s"
                          + "".join(f"; {e}" for e in row["errors"]),
                          flush=True)
    print(f"\n{mb.peers_line(ov)}, median of {args.repeat}\n")
    print("| cell | hidden | sequence | batch | threads | anvil ms | onnxruntime ms | openvino ms "
          "| vs faster peer | max abs diff | compile s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['cell']} | {r['hidden']} | {r['sequence']} | {r['batch']} | {r['threads']} | "
              f"{mb.fmt(r.get('anvil_ms'), '.3f')} | {mb.fmt(r.get('ort_ms'), '.3f')} | "
              f"{mb.fmt(r.get('openvino_ms'), '.3f')} | "
              f"{mb.fmt(r.get('ratio_vs_peer'), '.2f', 'x')} | "
              f"{mb.fmt(r.get('max_abs_diff'), '.1e')} | {mb.fmt(r.get('compile_s'), '.1f')} |")
    for t in args.threads:
        ratios = [(r["ratio_vs_peer"], r["model"]) for r in rows
                  if r["threads"] == t and r.get("ratio_vs_peer")]
        if ratios:
            worst = max(ratios)
            print(f"\n{t} threads: geometric mean vs faster peer "
                  f"{geomean([r for r, _ in ratios]):.2f}x, worst {worst[0]:.2f}x ({worst[1]})")
    if args.json:
        Path(args.json).write_text(json.dumps({"cpu": mb.cpu_name(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
