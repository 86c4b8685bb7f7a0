"""Re-measured best latency (ms) after T trials, per run: the best re-measured latency among the run's
decisive programs measured by then (the ``remeasured`` entries of ``suite.json``: the programs that
improved its recorded curve plus its fastest few), the rule of ``pruner_ms.bench.remeasure.curve``.

Usage: python3 curve_table.py suite.json
"""
import json
import sys

POINTS = (32, 64, 128, 192, 256, 320, 384)
suite = json.load(open(sys.argv[1]))
print("| run | " + " | ".join(str(t) for t in POINTS) + " | wall s |")
print("|---|" + "---|" * (len(POINTS) + 1))
for run in sorted(suite["runs"], key=lambda r: (r["workload"], r["seed"], r["strategy"])):
    steps = sorted(run.get("remeasured") or [], key=lambda e: e["trials"])
    cells = []
    for t in POINTS:
        seen = [e for e in steps if e["trials"] <= t and e.get("remeasured") is not None]
        cells.append(f"{1e3 * min(e['remeasured'] for e in seen):.3f}" if seen else "-")
    print(f"| {run['strategy']} s{run['seed']} | " + " | ".join(cells) + f" | {run['wall_seconds']:.0f} |")
