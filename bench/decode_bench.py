"""anvil against ONNX Runtime and OpenVINO on a GPT-style decoder's decode step and prefill.

    .venv/bin/python bench/decode_bench.py [--past 16 64 256 1024] [--prefill 128]
                                           [--size base] [--threads 2] [--repeat 50]
                                           [--build-dir build] [--json FILE]

The model is examples/generation/gpt_decoder.py's (base: vocabulary 8192, width 512, 8 heads,
6 layers; random weights, seed 0), exported once with /usr/bin/python3 (Debian's PyTorch) into
<build-dir>/bench-cache/decoder/ as its two graphs:
  - gpt_decode.onnx: one token against a KV cache of a symbolic past length, timed at each
    --past length with a seeded random cache of that length;
  - gpt_prefill.onnx: the prompt without a cache, timed at --prefill tokens.
anvil compiles each graph once (`anvil compile -O3`: a VM package, since its dims are dynamic)
and runs every length from that one package. Timing is bench/model_bench.py's: anvil `run
--print-time` (median of --repeat), ONNX Runtime (CPU provider, ORT_ENABLE_ALL) and OpenVINO (CPU,
f32, latency hint) in this process, the same thread counts, one right after the other. It prints
a Markdown table with the three latencies, anvil over ONNX Runtime and over the faster peer, and
the largest absolute difference from ONNX Runtime over all outputs (logits and the new cache).
"""
import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GPT_DECODER = ROOT / "examples" / "generation" / "gpt_decoder.py"
sys.path.insert(0, str(ROOT / "bench"))
import model_bench as mb  # noqa: E402


def export(cache, size):
    """The two ONNX graphs, exported again when gpt_decoder.py or the size changes."""
    stamp = cache / f"gpt_{size}.stamp"
    text = json.dumps({"size": size,
                       "sha256": hashlib.sha256(GPT_DECODER.read_bytes()).hexdigest()})
    out = cache / size
    prefill, decode = out / "gpt_prefill.onnx", out / "gpt_decode.onnx"
    if not (stamp.exists() and stamp.read_text() == text and prefill.exists() and decode.exists()):
        result = subprocess.run(["/usr/bin/python3", str(GPT_DECODER), str(out), "--size", size],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise mb.ToolError(f"exporting the decoder failed:\n{result.stderr[-2000:]}")
        stamp.write_text(text)
    return prefill, decode


def decoder_shape(size):
    sys.path.insert(0, str(GPT_DECODER.parent))
    import gpt_decoder

    return gpt_decoder.SIZES[size], gpt_decoder.names


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--build-dir", default=str(ROOT / "build"))
    parser.add_argument("--past", nargs="+", type=mb.positive_int, default=[16, 64, 256, 1024])
    parser.add_argument("--prefill", type=mb.positive_int, default=128)
    parser.add_argument("--size", choices=["small", "base"], default="base")
    parser.add_argument("--threads", nargs="+", type=mb.positive_int, default=[2])
    parser.add_argument("--repeat", type=mb.positive_int, default=50)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    anvil = mb.anvil_binary(args.build_dir)
    import numpy as np

    ov = mb.openvino_module()
    cache = Path(args.build_dir) / "bench-cache" / "decoder"
    cache.mkdir(parents=True, exist_ok=True)
    try:
        prefill, decode = export(cache, args.size)
    except mb.ToolError as error:
        mb.fail(error.message)
    (vocab, width, heads, layers, positions), names = decoder_shape(args.size)
    past_names, _ = names(layers)
    rng = np.random.default_rng(0)
    cases = [("prefill", args.prefill, prefill,
              {"input_ids": rng.integers(0, vocab, (1, args.prefill)).astype(np.int64)})]
    for past in args.past:
        if past + 1 > positions:
            mb.fail(f"--past {past} is beyond the model's {positions} positions")
        feeds = {"input_ids": rng.integers(0, vocab, (1, 1)).astype(np.int64)}
        for name in past_names:
            feeds[name] = rng.standard_normal((1, heads, past, width // heads)).astype(np.float32)
        cases.append(("decode", past, decode, feeds))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        packages = {}
        for path in (prefill, decode):
            package = tmp / f"{path.stem}.tar"
            packages[path] = (package, mb.anvil_compile(anvil, path, package, 3))
        for kind, length, path, feeds in cases:
            inputs = tmp / f"{kind}{length}.npz"
            np.savez(inputs, **feeds)
            package, compile_s = packages[path]
            for row in mb.measure_model(f"{kind}{length}", path, inputs, anvil, ov, args, tmp,
                                        package=package, compile_s=compile_s):
                row.update({"kind": kind, "length": length})
                rows.append(row)
                print(f"{kind} {length} {row['threads']}t: anvil {mb.fmt(row['anvil_ms'], '.3f')} ms, ort "
                      f"{mb.fmt(row['ort_ms'], '.3f')} ms, openvino "
                      f"{mb.fmt(row['openvino_ms'], '.3f')} ms"
                      + "".join(f"; {e}" for e in row["errors"]), flush=True)
    print(f"\n{mb.peers_line(ov)}, gpt_decoder {args.size} "
          f"(width {width}, {layers} layers, vocabulary {vocab}), median of {args.repeat}\n")
    print("| graph | tokens / past | threads | anvil ms | onnxruntime ms | openvino ms | vs ORT "
          "| vs faster peer | max abs diff |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['kind']} | {r['length']} | {r['threads']} | {mb.fmt(r.get('anvil_ms'), '.3f')} "
              f"| {mb.fmt(r.get('ort_ms'), '.3f')} | {mb.fmt(r.get('openvino_ms'), '.3f')} | "
              f"{mb.fmt(r.get('ratio'), '.2f', 'x')} | {mb.fmt(r.get('ratio_vs_peer'), '.2f', 'x')} "
              f"| {mb.fmt(r.get('max_abs_diff'), '.1e')} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"cpu": mb.cpu_name(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
