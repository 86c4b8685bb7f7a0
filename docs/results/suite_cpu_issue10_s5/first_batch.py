"""Per workload: when each strategy's first batch arrives, whether PrunerSearch's first batch already
beats the default's final (re-measured), and the speed-up it would have if the first batch arrived as
early as the default's."""
import json, statistics, sys
d = json.load(open(sys.argv[1]))
runs = d["runs"]
summ = d["summaries"]["remeasured"]
print("| workload | 1st batch arrives, s (pruner; default) | round 0 search s (pruner; default) | seeds where pruner's 1st batch <= default's final | speed-up (median) |")
print("|---|---|---|---|---|")
for key, s in sorted(summ.items()):
    wl = key.split(" vs ")[0]
    seeds = sorted({r["seed"] for r in runs if r["workload"] == wl})
    t1p, t1d, r0p, r0d, wins = [], [], [], [], 0
    for seed in seeds:
        p = next(r for r in runs if r["workload"] == wl and r["strategy"] == "pruner" and r["seed"] == seed)
        b = next(r for r in runs if r["workload"] == wl and r["strategy"] == "default" and r["seed"] == seed)
        t1p.append(p["batches"][0]["seconds"]); t1d.append(b["batches"][0]["seconds"])
        r0p.append(p["round_seconds"][0]); r0d.append(b["round_seconds"][0])
        first = p["remeasured"][0]["remeasured"]
        final_default = min(x["remeasured"] for x in b["remeasured"])
        wins += first <= final_default
    med = statistics.median
    print(f"| {wl} | {med(t1p):.0f}; {med(t1d):.0f} | {med(r0p):.1f}; {med(r0d):.1f} | {wins} of {len(seeds)} | {s['median_speedup']:.2f}x |")
