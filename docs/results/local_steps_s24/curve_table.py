"""Re-measured best latency (ms) after T trials, per run: the best-so-far curve that the suite itself
builds from each run's re-measured decisive programs (``pruner_ms.bench.remeasure.curve`` on the
``remeasured`` entries of ``suite.json``), read at T trials.

Usage: PYTHONPATH=. python curve_table.py suite.json
"""
import json
import sys

from pruner_ms.bench.remeasure import curve

POINTS = (32, 64, 128, 192, 256, 320, 384)
suite = json.load(open(sys.argv[1]))
print("| run | " + " | ".join(str(t) for t in POINTS) + " | wall s |")
print("|---|" + "---|" * (len(POINTS) + 1))
for run in sorted(suite["runs"], key=lambda r: (r["workload"], r["seed"], r["strategy"])):
    steps = curve([e for e in run.get("remeasured") or [] if e.get("remeasured") is not None], "remeasured")
    cells = []
    for t in POINTS:
        reached = [best for _, trials, best in steps if trials <= t]
        cells.append(f"{1e3 * reached[-1]:.3f}" if reached else "-")
    print(f"| {run['strategy']} s{run['seed']} | " + " | ".join(cells) + f" | {run['wall_seconds']:.0f} |")
