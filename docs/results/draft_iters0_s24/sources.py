"""Where each PrunerSearch run's progress came from: per round, the best recorded latency (ms) of the
batch's picks by source (draft, model, local, random) and the source that set a new best
(``improved_by`` in the round profiles, commit 21f4a92 on).

Usage: python3 sources.py suite.json [workload substring]
"""
import json
import sys

SOURCES = ("draft", "model", "local", "random")

suite = json.load(open(sys.argv[1]))
only = sys.argv[2] if len(sys.argv) > 2 else ""
print("| workload | strategy | seed | round: best ms per source (d/m/l/r), * = new best by |")
print("|---|---|---|---|")
for run in sorted(suite["runs"], key=lambda r: (r["workload"], r["strategy"], r["seed"])):
    profiles = [p for p in run.get("round_profiles") or [] if p]
    if only not in run["workload"] or not profiles:
        continue
    cells = []
    for i, p in enumerate(profiles):
        best = "/".join(f"{p[f'measured_best_ms_{s}']:.3f}" if f"measured_best_ms_{s}" in p else "-" for s in SOURCES)
        cells.append(f"r{i}: {best} *{p.get('improved_by') or 'none'}")
    print(f"| {run['workload']} | {run['strategy']} | {run['seed']} | {'; '.join(cells)} |")
