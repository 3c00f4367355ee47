"""Best latency against trials, per task, for tuning runs of the same model (anvil tune records).

    python3 bench/tune_compare.py xgb=RECORDS.json random=RECORDS.json [--strategy auto]

Each argument is LABEL=FILE, the JSON-lines records of one `anvil tune` run (the same model,
the same budget, a different --tuner). For every task of the given strategy (default: auto)
it prints the default schedule's time (the record without knobs) and, for each run, the best
time found after 8, 16, 32 and 64 trials and after all of them, as a speedup over the default
(the median of a record's repeats is its time). Under the table: each run's geometric mean of
the final speedups, and the sum over the tasks of the best times against the sum of the
defaults.
"""
import argparse
import json
import math
import statistics
from collections import defaultdict

CHECKPOINTS = [8, 16, 32, 64]


def load(path):
    """{task: (name, strategy, default_ms, [trial ms in order])} of one records file."""
    tasks = {}
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        name, strategy = r.get("name", "?"), r.get("strategy", "?")
        entry = tasks.setdefault(r["task"], [name, strategy, None, []])
        ms = statistics.median(r["costs_ms"]) if not r.get("error") and r.get("costs_ms") else math.inf
        if not r.get("knobs"):
            entry[2] = ms
        else:
            entry[3].append(ms)
    return tasks


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("runs", nargs="+", metavar="LABEL=FILE")
    parser.add_argument("--strategy", default="auto")
    args = parser.parse_args()
    runs = []
    for spec in args.runs:
        label, _, path = spec.partition("=")
        runs.append((label, load(path)))
    task_ids = sorted({t for _, tasks in runs for t, e in tasks.items() if e[1] == args.strategy})
    header = ["task", "kernel", "default ms"]
    for label, _ in runs:
        header += [f"{label} @{n}" for n in CHECKPOINTS] + [f"{label} all (trials)"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    finals = defaultdict(list)
    sums = defaultdict(lambda: [0.0, 0.0])
    for t in task_ids:
        name = next(tasks[t][0] for _, tasks in runs if t in tasks)
        defaults = [tasks[t][2] for _, tasks in runs if t in tasks and tasks[t][2]]
        default = statistics.median(defaults) if defaults else None
        cells = [t[:8], name, f"{default:.3f}" if default else "-"]
        for label, tasks in runs:
            trials = tasks.get(t, [None, None, None, []])[3]
            own_default = tasks.get(t, [None, None, None])[2] or default
            for n in CHECKPOINTS:
                best = min(trials[:n], default=math.inf)
                cells.append(f"{own_default / best:.2f}x" if own_default and best < math.inf
                             and len(trials) >= n else "-")
            best = min(trials, default=math.inf)
            if own_default and best < math.inf:
                speedup = max(1.0, own_default / best)  # the default is kept when it is faster
                finals[label].append(speedup)
                sums[label][0] += own_default
                sums[label][1] += own_default / speedup
                cells.append(f"{own_default / best:.2f}x ({len(trials)})")
            else:
                cells.append("-")
        print("| " + " | ".join(cells) + " |")
    print()
    for label, _ in runs:
        values = finals[label]
        if values:
            geo = math.exp(sum(math.log(v) for v in values) / len(values))
            total_default, total_best = sums[label]
            print(f"{label}: geometric mean of the best over default (default kept where faster) "
                  f"over {len(values)} {args.strategy} tasks: {geo:.2f}x; their summed time "
                  f"{total_default:.2f} -> {total_best:.2f} ms ({total_default / total_best:.2f}x)")


if __name__ == "__main__":
    main()
