"""Ablation table from suite.json: every strategy against MetaSchedule's default, on re-measured latencies.

    PYTHONPATH=. python docs/results/ablation_s7/table.py docs/results/ablation_s7/suite.json
"""
import collections, json, statistics, sys

from pruner_ms.bench.compare import _summarize_pair
from pruner_ms.bench.remeasure import curve

d = json.load(open(sys.argv[1]))
runs = d["runs"]
curves = [curve(r["remeasured"], "remeasured") for r in runs]
strats = [s for s in d["strategies"] if s != "default"]
search = collections.defaultdict(list)
for r in runs:
    search[(r["workload"], r["strategy"])].append(sum(r.get("round_seconds") or []))
wls = sorted({r["workload"] for r in runs})
print("| workload | strategy | speed-up vs default (median; per seed) | final / default's (per seed) | wall s/trial / default's | 1st batch / default's 1st | search s per run (default's) |")
print("|---|---|---|---|---|---|---|")
med = collections.defaultdict(list)
for wl in wls:
    base = statistics.mean(search[(wl, "default")])
    for st in strats:
        s = _summarize_pair([r for r in runs if r["workload"] == wl], st, ["default"],
                            [c for r, c in zip(runs, curves) if r["workload"] == wl]).get(f"{wl} vs default")
        if s is None:
            continue
        per = ", ".join(f"{x['speedup']:.2f}" for x in s["seeds"])
        fr = ", ".join(f"{x['final_ratio']:.3f}" for x in s["seeds"])
        med[st].append((s["median_speedup"], s["median_final_ratio"], s["median_s_per_trial_ratio"]))
        print(f"| {wl} | {st} | {s['median_speedup']:.2f}x ({per}) | {s['median_final_ratio']:.3f} ({fr}) | "
              f"{s['median_s_per_trial_ratio']:.2f} | {s['median_first_batch_ratio']:.3f} | "
              f"{statistics.mean(search[(wl, st)]):.1f} ({base:.1f}) |")
print()
print("| strategy | median over workloads: speed-up | final / default's | wall s/trial / default's | workloads where final <= default's |")
print("|---|---|---|---|---|")
for st in strats:
    if med[st]:
        print(f"| {st} | {statistics.median(x for x, _, _ in med[st]):.2f}x | {statistics.median(y for _, y, _ in med[st]):.3f} | "
              f"{statistics.median(z for _, _, z in med[st]):.2f} | {sum(y <= 1 for _, y, _ in med[st])} of {len(med[st])} |")
