"""What `anvil tune` buys within a fixed budget: untuned against tuned latency, per model.

    .venv/bin/python bench/tune_bench.py [--models resnet18 ...] [--budget 600] [--threads 2]
                                         [--rounds 5] [--repeat 20] [--build-dir build]
                                         [--json FILE]

For each model (default: the six of the model tests, exported once into <build-dir>/bench-cache
as bench/model_bench.py does):
  1. `anvil compile MODEL.onnx -o untuned.tar`;
  2. `anvil tune MODEL.onnx -o MODEL.records.json --total-time BUDGET --threads T` (the tuner
     measures kernels on T threads, as the packages then run), wall clock and the peak memory of
     the tuner and its measurement worker together (resident set sizes summed over the process
     tree, sampled every 0.2 s);
  3. `anvil compile MODEL.onnx --tuning-records MODEL.records.json -o tuned.tar`;
  4. both packages timed interleaved, ROUNDS times each (untuned, tuned, untuned, ...),
     `ANVIL_NUM_THREADS=T anvil run PACKAGE --print-time --repeat R`; a package's latency is the
     least of its rounds' medians, so that a moment of load on the machine weighs on neither.
Prints a Markdown table (model, untuned ms, tuned ms, speed-up, tuning minutes, trials, tuner
peak memory) and the summary the targets of `anvil tune` are stated in: models at >= 1.15x,
the geometric mean of the speed-ups, models slower tuned than untuned beyond 3%.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import model_bench  # noqa: E402

DEFAULT_MODELS = ["resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1", "efficientnet_b0",
                  "vit_b_16"]


def tree_rss_bytes(pid):
    """Resident bytes of pid and all its descendants (0 once it is gone)."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    stack.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return total


def tune(anvil, onnx_path, records, budget, threads):
    """Runs anvil tune; returns (seconds, trials, peak bytes)."""
    command = [str(anvil), "tune", str(onnx_path), "-o", str(records), "--total-time",
               str(budget), "--threads", str(threads)]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = [0]

    def sample():
        while process.poll() is None:
            peak[0] = max(peak[0], tree_rss_bytes(process.pid))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output = process.stdout.read()
    process.wait()
    sampler.join()
    seconds = time.perf_counter() - start
    if process.returncode != 0:
        tail = "\n".join(output.strip().splitlines()[-20:])
        raise model_bench.ToolError(f"`{' '.join(command)}` exited with {process.returncode}:\n"
                                    f"{tail}", summary=f"anvil tune failed: {tail[-200:]}")
    trials = sum(1 for line in Path(records).read_text().splitlines() if line.strip())
    return seconds, trials, peak[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=DEFAULT_MODELS,
                        choices=model_bench.ALL_MODELS, metavar="MODEL")
    parser.add_argument("--budget", type=float, default=600,
                        help="seconds of tuning per model (default: %(default)s)")
    parser.add_argument("--threads", type=model_bench.positive_int, default=os.cpu_count())
    parser.add_argument("--rounds", type=model_bench.positive_int, default=5)
    parser.add_argument("--repeat", type=model_bench.positive_int, default=20)
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--json", help="write every figure to this file")
    args = parser.parse_args()

    build = Path(args.build_dir).resolve()
    anvil = build / "anvil"
    if not anvil.exists():
        model_bench.fail(f"no anvil binary at {anvil}; run `make build` first")
    cache = build / "bench-cache"
    cache.mkdir(parents=True, exist_ok=True)
    failed = model_bench.export_models_once(cache, args.models)
    work = build / "tune-bench"
    work.mkdir(exist_ok=True)

    print(f"CPU: {model_bench.cpu_name()}; {args.threads} threads; "
          f"{args.budget:.0f} s of tuning per model", flush=True)
    rows = []
    for name in args.models:
        row = {"model": name, "error": failed.get(name)}
        rows.append(row)
        if row["error"]:
            continue
        onnx_path, inputs = cache / f"{name}.onnx", cache / f"{name}.input.npz"
        records = work / f"{name}.records.json"
        untuned, tuned = work / f"{name}.untuned.tar", work / f"{name}.tuned.tar"
        try:
            model_bench.run_tool([anvil, "compile", onnx_path, "-o", untuned])
            row["tune_s"], row["trials"], row["peak_bytes"] = tune(
                anvil, onnx_path, records, args.budget, args.threads)
            model_bench.run_tool([anvil, "compile", onnx_path, "--tuning-records", records,
                                  "-o", tuned])
            times = {"untuned": [], "tuned": []}
            for _ in range(args.rounds):
                for which, package in (("untuned", untuned), ("tuned", tuned)):
                    times[which].append(model_bench.anvil_latency(
                        anvil, package, inputs, work / f"{name}.{which}.out.npz",
                        args.threads, args.repeat))
            row["untuned_ms"], row["tuned_ms"] = min(times["untuned"]), min(times["tuned"])
            row["speedup"] = row["untuned_ms"] / row["tuned_ms"]
            row["rounds"] = times
        except model_bench.ToolError as error:
            row["error"] = error.summary or model_bench.one_line(error)
        print(f"{name}: " + (row["error"] or
                             f"{row['untuned_ms']:.2f} ms -> {row['tuned_ms']:.2f} ms "
                             f"({row['speedup']:.2f}x) after {row['tune_s'] / 60:.1f} min, "
                             f"{row['trials']} trials, peak {row['peak_bytes'] / 2**30:.2f} GiB"),
              flush=True)

    print("\n| model | untuned ms | tuned ms | speed-up | tuning min | trials | tuner peak GiB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        if row.get("speedup") is None:
            print(f"| {row['model']} | - | - | - | - | - | - |")
            continue
        print(f"| {row['model']} | {row['untuned_ms']:.2f} | {row['tuned_ms']:.2f} | "
              f"{row['speedup']:.2f}x | {row['tune_s'] / 60:.1f} | {row['trials']} | "
              f"{row['peak_bytes'] / 2**30:.2f} |")
    done = [row for row in rows if row.get("speedup")]
    if done:
        geomean = math.exp(sum(math.log(row["speedup"]) for row in done) / len(done))
        fast = [row["model"] for row in done if row["speedup"] >= 1.15]
        slower = [row["model"] for row in done if row["speedup"] < 1 / 1.03]
        print(f"\ngeometric mean speed-up: {geomean:.3f}x over {len(done)} models")
        print(f"models at >= 1.15x: {len(fast)} ({', '.join(fast) or 'none'})")
        print(f"models slower tuned (beyond 3%): {', '.join(slower) or 'none'}")
    for row in rows:
        if row["error"]:
            print(f"{row['model']}: {row['error']}")
    if args.json:
        Path(args.json).write_text(json.dumps({"cpu": model_bench.cpu_name(),
                                               "threads": args.threads, "budget_s": args.budget,
                                               "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
